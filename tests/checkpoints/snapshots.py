"""Helpers: a workspace's exact state (bytes and modes) and the wire calls of checkpoints."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Any

from pytest_lsp import LanguageClient


def tree_state(root: Path, skip_git: bool = True) -> dict[str, tuple[str, int]]:
    """path -> (sha256 of the bytes, permission bits) of every file under `root`."""
    state: dict[str, tuple[str, int]] = {}
    for folder, dirs, files in os.walk(root):
        if skip_git and ".git" in dirs:
            dirs.remove(".git")
        for name in files:
            path = Path(folder) / name
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                digest = "link:" + os.readlink(path)
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            state[path.relative_to(root).as_posix()] = (digest, stat.S_IMODE(st.st_mode))
    return state


def git_folder_state(root: Path) -> dict[str, tuple[str, int]]:
    """Every file of the user's .git (HEAD, index, refs, hooks, objects, config)."""
    return tree_state(root / ".git", skip_git=False)


async def checkpoints(client: LanguageClient, **params: Any) -> list[dict[str, Any]]:
    result = await client.protocol.send_request_async("toolhost/checkpoints", params)
    listed: list[dict[str, Any]] = result["checkpoints"]
    return listed


async def revert(client: LanguageClient, call_id: str) -> dict[str, Any]:
    result: dict[str, Any] = await client.protocol.send_request_async(
        "toolhost/revert", {"callId": call_id}
    )
    return result


def changes(checkpoint: dict[str, Any]) -> set[tuple[str, str, str | None]]:
    return {(f["change"], f["path"], f.get("fromPath")) for f in checkpoint["files"]}
