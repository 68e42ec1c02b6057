"""The managed layer: `/etc/toolhost/managed.toml` (or `$TOOLHOST_MANAGED_CONFIG`), written by
an administrator, above every other layer (docs/POLICY.md, "The managed file").

- A setting it sets is locked: a lower layer's different value (user file, workspace file,
  editor settings, a command-line flag such as `toolhost mcp --approvals client`) is
  ignored with a notice.
- Its `deny` and `ask` rules always apply; its `allow` rules apply beside the others'.
- `[policy] allow_managed_only = true`: only the managed file may allow without asking.
  Lower layers' allow rules (allow_always records too) and their switches that turn asking
  into allowing (`mode = "acceptEdits"` or `"bypass"`, `unattended = "allow"`,
  `mcp.approvals = "client"`, `toolhost call --yes`) are ignored.
- With ask rules of its own, a lower layer's `bypass` mode and `unattended = "allow"` are
  ignored too: they would answer those asks with yes.
- A file that cannot be read, is not valid TOML or holds an unknown or invalid setting
  FAILS CLOSED: mode readOnly, every command asks, the sandbox read-only without network,
  and only the failed file's (empty) allow list: toolhost says so in status, doctor and the
  first result, rather than run without the administrator's rules.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

from lsp_server.config.rule_syntax import rule_problem
from lsp_server.config.tree import structure_config
from lsp_server.config.workspace_file import normalise, read_regular_file

DEFAULT_MANAGED_PATH = Path("/etc/toolhost/managed.toml")
MANAGED_ENV = "TOOLHOST_MANAGED_CONFIG"
MANAGED_ONLY_KEY = "allow_managed_only"
# Lists every layer adds to (none can take an entry away): not locked by the managed file.
ACCUMULATED = frozenset(
    {
        "policy.allow",
        "policy.ask",
        "policy.deny",
        "workspace.secret_patterns",
        "workspace.protected_paths",
        "shell.env_drop",
        "shell.sandbox_hide",
        "sessions.isolated",
    }
)
# What toolhost runs under when the managed file is broken.
FAIL_CLOSED: dict[str, Any] = {
    "policy": {"mode": "readOnly", "ask": ["Bash"], "unattended": "deny", "allow": []},
    "shell": {"sandbox": "read-only", "sandbox_network": False, "sandbox_network_allow": []},
    "mcp": {"approvals": "auto"},
}


@attrs.define
class ManagedLayer:
    path: Path
    state: Literal["absent", "applied", "invalid"] = "absent"
    data: dict[str, Any] = attrs.Factory(dict)
    """The settings it applies (normalised; FAIL_CLOSED when invalid)."""
    message: str = ""
    allow_managed_only: bool = False

    @property
    def present(self) -> bool:
        return self.state != "absent"

    @property
    def label(self) -> str:
        if self.state == "invalid":
            return f"managed file {self.path} (invalid: toolhost fails closed)"
        return f"managed file {self.path}"

    @property
    def locked(self) -> dict[str, Any]:
        """`section.key` -> the value no lower layer may change."""
        return {
            f"{section}.{key}": value
            for section, table in self.data.items()
            if isinstance(table, Mapping)
            for key, value in table.items()
            if f"{section}.{key}" not in ACCUMULATED
        }

    @property
    def has_ask_rules(self) -> bool:
        policy = self.data.get("policy")
        return isinstance(policy, Mapping) and bool(policy.get("ask"))

    def overrides(self, key: str, value: Any) -> str | None:
        """Why a lower layer's `key = value` does not apply (None: it applies)."""
        locked = self.locked
        if key in locked:
            if locked[key] == value:
                return ""  # the same value: nothing to say
            return f"the managed file {self.path} sets it to {locked[key]!r}"
        only = self.allow_managed_only
        if key == "policy.allow" and only:
            return f"the managed file {self.path} allows only its own rules (allow_managed_only)"
        answers_yes = (
            (key == "policy.mode" and value == "bypass")
            or (key == "policy.unattended" and value == "allow")
            or (only and key == "policy.mode" and value == "acceptEdits")
            or (only and key == "mcp.approvals" and value == "client")
        )
        if answers_yes and (only or self.has_ask_rules):
            why = "allows only its own rules" if only else "has ask rules, which must ask"
            return f"it would allow without asking, and the managed file {self.path} {why}"
        return None

    def may_answer_yes(self) -> str | None:
        """None when a flag that answers every ask with yes (`toolhost call --yes`) may apply;
        otherwise why not."""
        if self.allow_managed_only or self.has_ask_rules:
            return f"the managed file {self.path} requires that its asks reach a person"
        return None


def managed_path_from(environ: Mapping[str, str]) -> Path:
    """$TOOLHOST_MANAGED_CONFIG (for tests, and for a managed file kept elsewhere), else
    /etc/toolhost/managed.toml."""
    override = environ.get(MANAGED_ENV)
    return Path(override) if override else DEFAULT_MANAGED_PATH


def _fail_closed(path: Path, why: str) -> ManagedLayer:
    message = (
        f"{path}: {why}. toolhost fails closed until it is fixed: mode readOnly, every "
        "command asks, the sandbox read-only without network"
    )
    return ManagedLayer(
        path, "invalid", normalise(FAIL_CLOSED), message=message, allow_managed_only=True
    )


def read_managed(path: Path) -> ManagedLayer:
    try:
        raw = read_regular_file(path)
    except OSError as exc:
        return _fail_closed(path, f"cannot be read ({exc})")
    if raw is None:
        return ManagedLayer(path)
    try:
        data = normalise(tomllib.loads(raw.decode("utf-8")))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return _fail_closed(path, f"is not valid TOML ({exc})")
    policy = data.get("policy")
    only = False
    if isinstance(policy, Mapping) and MANAGED_ONLY_KEY in policy:
        only = policy[MANAGED_ONLY_KEY]
        if not isinstance(only, bool):
            return _fail_closed(path, "policy.allow_managed_only should be true or false")
        data["policy"] = {k: v for k, v in policy.items() if k != MANAGED_ONLY_KEY}
    problems = _problems(data)
    if problems:
        return _fail_closed(path, "; ".join(problems))
    return ManagedLayer(path, "applied", data, allow_managed_only=only)


def _problems(data: Mapping[str, Any]) -> list[str]:
    """Every setting must be known and valid, and every rule must parse: a rule or a lock
    the administrator wrote must never be dropped quietly."""
    problems: list[str] = []
    structure_config(data, problems)
    policy = data.get("policy")
    if isinstance(policy, Mapping):
        for name in ("allow", "ask", "deny"):
            rules = policy.get(name)
            for rule in rules if isinstance(rules, list) else []:
                problem = rule_problem(rule)
                if problem is not None:
                    problems.append(f"policy.{name}: {problem}")
    return problems
