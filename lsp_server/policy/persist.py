"""allow_always: add the rule to the workspace's .toolhost.toml, keeping the user's comments."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import tomlkit

from lsp_server.config.layers import WORKSPACE_CONFIG_NAME
from lsp_server.config.trust import TrustStore, content_sha256
from lsp_server.config.workspace_file import read_regular_file
from lsp_server.fs.textio import atomic_write


class PersistError(Exception):
    """The rule could not be written (unreadable TOML, a non-list `allow`, an OS error)."""


def persist_allow_rule(root: Path, rule_text: str, trust: TrustStore) -> Path:
    """Append `rule_text` to `[policy] allow` (once) and record it as this user's own.

    When the user had approved the file's content (or there was no file), the new content
    is approved too: the user's own addition keeps it trusted. Otherwise only this rule is
    recorded, so that what someone else (the agent) added to the file never becomes trusted
    by riding along with the user's answer."""
    path = root / WORKSPACE_CONFIG_NAME
    try:
        raw = read_regular_file(path)
        original = raw.decode("utf-8") if raw is not None else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise PersistError(f"cannot read {path}: {exc}") from exc
    was_approved = raw is None or trust.approved_config(root, path) == content_sha256(raw)
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
    if was_approved:
        trust.approve_config(root, path, content_sha256(text.encode("utf-8")))
    return path
