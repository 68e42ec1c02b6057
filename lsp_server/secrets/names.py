"""Which environment variables are credentials, and which of them a command still gets.

A name is a credential when it matches one of CREDENTIAL_PATTERNS (case-insensitive, shell
glob) or one of the user's `shell.env_drop`, or when its value holds a password inside a
URL (`postgres://user:pass@host`). Commands get every other variable; `shell.env_pass`
lets a named credential through (its value is still redacted from what the model sees).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping

import attrs

CREDENTIAL_PATTERNS: tuple[str, ...] = (
    "*_API_KEY",
    "*APIKEY*",
    "*_KEY",
    "*_PRIVATE_KEY*",
    "*_ACCESS_KEY*",
    "*_TOKEN",
    "*_TOKEN_*",
    "TOKEN",
    "*_AUTH",
    "*_AUTHTOKEN",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*PASSPHRASE*",
    "*_PASS",
    "*_PWD",
    "*CREDENTIAL*",
    "*_COOKIE",
    "*_DSN",
    "AWS_*",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "NPM_TOKEN",
    "ANTHROPIC_*KEY*",
    "OPENAI_*KEY*",
)
"""Names of credentials (upper-cased before matching). docs/SHELL.md lists them."""

HARMLESS: frozenset[str] = frozenset(
    {"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_DEFAULT_OUTPUT", "AWS_PAGER"}
)
"""AWS_* names that choose a region or profile and hold no secret: commands keep them."""

# Credentials in a URL's user part: scheme://user:password@host.
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/@:]*:[^\s/@]+@")


def _glob(patterns: Iterable[str]) -> re.Pattern[str] | None:
    parts = [fnmatch.translate(p.upper()) for p in patterns if p]
    return re.compile("|".join(parts)) if parts else None


@attrs.frozen
class CredentialNames:
    """`shell.env_drop` adds patterns; `shell.env_pass` names (or globs) let through."""

    env_pass: tuple[str, ...] = ()
    env_drop: tuple[str, ...] = ()
    _drop: re.Pattern[str] | None = attrs.field(init=False, eq=False, repr=False)
    _pass: re.Pattern[str] | None = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_drop", _glob((*CREDENTIAL_PATTERNS, *self.env_drop)))
        # Passed names match as written: environment names are case-sensitive.
        passed = [fnmatch.translate(p) for p in self.env_pass if p]
        object.__setattr__(self, "_pass", re.compile("|".join(passed)) if passed else None)

    @classmethod
    def of(cls, env_pass: Iterable[str] = (), env_drop: Iterable[str] = ()) -> CredentialNames:
        return cls(tuple(env_pass), tuple(env_drop))

    def is_credential(self, name: str, value: str = "") -> bool:
        upper = name.upper()
        if upper in HARMLESS:
            return False
        if self._drop is not None and self._drop.match(upper):
            return True
        return bool(value) and "://" in value and _URL_PASSWORD.search(value) is not None

    def passes(self, name: str) -> bool:
        return self._pass is not None and self._pass.match(name) is not None

    def withheld(self, name: str, value: str) -> bool:
        """Whether a command does NOT get this variable."""
        return self.is_credential(name, value) and not self.passes(name)

    def credentials(self, env: Mapping[str, str]) -> dict[str, str]:
        """The credentials of `env`, passed ones included (their values stay secret)."""
        return {name: value for name, value in env.items() if self.is_credential(name, value)}
