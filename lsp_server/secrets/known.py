"""SecretValues: the known secret values of one server and the redactor over them, rebuilt
only when the set changes (a .env file edited, a key file added)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_server.secrets.names import CredentialNames
from lsp_server.secrets.process_environments import ProcessSecrets
from lsp_server.secrets.redaction import Redactor, Secret
from lsp_server.secrets.sources import SecretFiles, environment_secrets

if TYPE_CHECKING:
    from lsp_server.config.tree import ShellConfig
    from lsp_server.fs.shared_listings import SharedListings
    from lsp_server.fs.workspace import Workspace
    from lsp_server.runtime.context import Services


class SecretValues:
    def __init__(
        self,
        workspace: Workspace | None,
        names: CredentialNames | None = None,
        environ: Mapping[str, str] | None = None,
        processes: bool = False,
        listings: SharedListings | None = None,
    ) -> None:
        """`processes`: also the credentials of the user's other processes
        (process_environments.py); `listings`: shared with the checkpoint watcher's walks
        (sources.py)."""
        self.names = names or CredentialNames()
        source = os.environ if environ is None else environ
        self._environment = tuple(environment_secrets(source, self.names))
        home = _home(source)
        self._files = (
            None
            if workspace is None
            else SecretFiles(workspace, self.names, home=home, shared=listings)
        )
        self._processes = ProcessSecrets(self.names) if processes else None
        self._basis: tuple[tuple[Secret, ...], tuple[Secret, ...]] = ((), ())
        self._typed: tuple[Secret, ...] = ()
        self._redactor = Redactor(self._environment)

    @classmethod
    def of(
        cls,
        workspace: Workspace | None,
        shell: ShellConfig,
        listings: SharedListings | None = None,
    ) -> SecretValues:
        names = CredentialNames.of(shell.env_pass, shell.env_drop)
        return cls(workspace, names, processes=True, listings=listings)

    @classmethod
    def of_server(
        cls, services: Services, workspace: Workspace, shell: ShellConfig
    ) -> SecretValues:
        """The server's (compose.py installs it, shared with the audit log), or a new one."""
        try:
            return services.get(SecretValues)
        except LookupError:
            return cls.of(workspace, shell)

    def redactor(self) -> Redactor:
        """The current redactor: the secret files are looked at again first (a stat each;
        a walk now and then: sources.py), and the other processes' environments now and
        then (process_environments.py)."""
        basis = (
            self._files.refresh() if self._files is not None else (),
            self._processes.current() if self._processes is not None else (),
        )
        if basis[0] is not self._basis[0] or basis[1] is not self._basis[1]:
            self._basis = basis
            self._rebuild()
        return self._redactor

    def _rebuild(self) -> None:
        secrets = (*self._environment, *self._typed, *self._basis[0], *self._basis[1])
        self._redactor = Redactor(secrets)

    def remember_typed(self, value: str) -> None:
        """A secret the user typed for a command (secrets/askpass.py): replaced in every
        later result and audit line, should a program print it."""
        if value and all(s.value != value for s in self._typed):
            self._typed = (*self._typed, Secret(value, "typed by the user"))
            self._rebuild()

    def redact(self, text: str) -> str:
        return self.redactor().redact(text)

    def redact_known(self, text: str) -> str:
        """With the values known already, without looking at the files (the audit writer,
        which may run in another thread)."""
        return self._redactor.redact(text)

    def redact_json(self, value: Any) -> Any:
        """Every string inside a JSON-like value (an error's details)."""
        redactor = self._redactor
        if isinstance(value, str):
            return redactor.redact(value)
        if isinstance(value, list):
            return [self.redact_json(item) for item in value]
        if isinstance(value, dict):
            return {key: self.redact_json(item) for key, item in value.items()}
        return value


def _home(environ: Mapping[str, str]) -> Path | None:
    home = environ.get("HOME")
    return Path(home) if home and home.startswith("/") and home != "/" else None
