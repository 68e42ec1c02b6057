"""allow_always: add the rule to the workspace's .toolhost.toml, keeping the user's comments."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import tomlkit

from lsp_server.config.layers import WORKSPACE_CONFIG_NAME
from lsp_server.config.trust import TrustStore
from lsp_server.runtime.fs.textio import atomic_write


class PersistError(Exception):
    """The rule could not be written (unreadable TOML, a non-list `allow`, an OS error)."""


def persist_allow_rule(root: Path, rule_text: str, trust: TrustStore) -> Path:
    """Append `rule_text` to `[policy] allow` (once) and record it as this user's own."""
    path = root / WORKSPACE_CONFIG_NAME
    try:
        original = path.read_text(encoding="utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise PersistError(f"cannot read {path}: {exc}") from exc
    try:
        document: Any = tomlkit.parse(original)
    except Exception as exc:  # tomlkit raises its own ParseError family
        raise PersistError(f"{path} is not valid TOML ({exc}); the rule was not saved") from exc
    policy = document.get("policy")
    if policy is None:
        policy = tomlkit.table()
        document["policy"] = policy
    elif not isinstance(policy, dict):
        raise PersistError(f"{path}: `policy` is not a table; the rule was not saved")
    allow = policy.get("allow")
    if allow is None:
        allow = tomlkit.array()
        policy["allow"] = allow
    elif not isinstance(allow, list):
        raise PersistError(f"{path}: `policy.allow` is not a list; the rule was not saved")
    if rule_text not in [str(item) for item in allow]:
        allow.append(rule_text)
    text = tomlkit.dumps(document)
    tomllib.loads(text)  # never leave a file we could not read back
    try:
        atomic_write(path, text.encode("utf-8"))
    except OSError as exc:
        raise PersistError(f"cannot write {path}: {exc}") from exc
    trust.record(root, rule_text)
    return path
