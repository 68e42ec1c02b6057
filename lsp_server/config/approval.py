"""Recording the user's approval of a workspace `.toolhost.toml`, by its exact content.

Two doors lead here, both the user's own: `toolhost trust` on a terminal, and the editor's
`toolhost/trustConfig` request on its LSP connection. No tool call reaches it: the attach
socket forwards only tool calls (attach/listener.py), `toolhost acp` serves no LSP
methods, and `toolhost trust` run by the agent's shell cannot write the user's state folder
from the sandbox (and asks outside it, as any command that is not a plain read).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from lsp_server.config.trust import TrustStore, content_sha256
from lsp_server.config.workspace_file import WORKSPACE_CONFIG_NAME, read_regular_file
from lsp_server.core.uris import uri_to_path
from lsp_server.sandbox.placeholders import is_placeholder

if TYPE_CHECKING:
    from lsprotocol.types import DidChangeWatchedFilesParams

_SHA256 = re.compile(r"[0-9a-fA-F]{64}")


@attrs.define
class Approval:
    trusted: bool
    message: str
    root: Path | None = None


def config_root(path: Path, roots: Sequence[Path]) -> Path | None:
    """The root whose `.toolhost.toml` `path` names (None: not a root's config file)."""
    if path.name != WORKSPACE_CONFIG_NAME:
        return None
    parent = os.path.realpath(Path(path).absolute().parent)
    for root in roots:
        if os.path.realpath(root) == parent:
            return root
    return None


def approve_config(path: Path, sha256: str, roots: Sequence[Path], trust: TrustStore) -> Approval:
    """Record the approval when `path` is a root's `.toolhost.toml` whose bytes hash to
    `sha256` now (the content the user was shown); otherwise say why nothing was recorded."""
    if not _SHA256.fullmatch(sha256 or ""):
        return Approval(False, "sha256 should be 64 hexadecimal digits (the file's sha256)")
    try:
        root = config_root(path, roots)
    except (ValueError, OSError) as exc:  # a NUL byte, a name too long
        return Approval(False, f"{path!r} is not a usable path ({exc})")
    if root is None:
        names = ", ".join(str(r / WORKSPACE_CONFIG_NAME) for r in roots) or "none"
        return Approval(
            False,
            f"{path} is not a workspace root's {WORKSPACE_CONFIG_NAME} (these are: {names})",
        )
    try:
        raw = read_regular_file(path)
    except OSError as exc:
        return Approval(False, f"cannot read {path}: {exc}")
    if raw is None:
        return Approval(False, f"{path} does not exist")
    current = content_sha256(raw)
    if current != sha256.lower():
        return Approval(
            False,
            f"{path} changed since it was shown (its sha256 is now {current}): nothing "
            "recorded; review it again",
        )
    try:
        trust.approve_config(root, path, current)
    except OSError as exc:
        return Approval(False, f"cannot record the approval in {trust.configs_path}: {exc}")
    return Approval(True, f"approved {path} (sha256 {current})", root)


def names_workspace_config(roots: Sequence[Path], params: DidChangeWatchedFilesParams) -> bool:
    """Whether a watched-files notice names a root's .toolhost.toml."""
    for change in params.changes:
        path = uri_to_path(change.uri)
        # The sandbox's placeholder appearing while a command runs is no config change.
        if path is not None and config_root(path, roots) is not None and not is_placeholder(path):
            return True
    return False
