"""Helpers: a workspace's exact state (bytes and modes) and the wire calls of checkpoints."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from pathlib import Path
from typing import Any, NamedTuple

from pytest_lsp import LanguageClient

from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.config.tree import Limits
from lsp_server.fs.workspace import Workspace
from lsp_server.runtime.file_service import FileService
from lsp_server.runtime.reverts import Reverter
from lsp_server.runtime.sessions.observations import FileLocks, Observations


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
            elif not stat.S_ISREG(st.st_mode):
                continue  # (a pipe, a socket: nothing to read)
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


class Ran(NamedTuple):
    """A command checkpointed by an engine: its checkpoints' records (sorted), its window's
    notes, and how the snapshot before it was taken (`watchers.scans`)."""

    records: list[tuple[object, ...]]
    notes: list[str]
    scan: str | None

    @property
    def said(self) -> list[str]:
        """The notes besides those on how the root is watched ("[checkpoints of ...")."""
        return [n for n in self.notes if not n.startswith("[checkpoints of ")]


async def run_checkpointed(
    engine: Checkpoints, root: Path, call_id: str, command: str, script: str | None = None
) -> Ran:
    """Run `script` (default: `command`) in `root` as the bash call `call_id` running
    `command`, checkpointed by `engine` as the bash tool does."""
    window = await engine.before_command(call_id, "s", "bash", command)
    scan = engine.watchers.scans.get(root)
    subprocess.run(["sh", "-c", command if script is None else script], cwd=root, check=True)
    made = await engine.after_command(window)
    await engine.settle()
    assert window is not None
    records = sorted(
        (f.path, f.change, f.source, f.before, f.after, f.not_stored)
        for checkpoint in made
        for f in checkpoint.files
    )
    return Ran(records, window.notes, scan)


async def revert_cleanly(engine: Checkpoints, root: Path, call_id: str) -> None:
    """Revert `call_id` in `root` as toolhost/revert does; it must meet no conflict."""
    files = FileService(Workspace([root]), Observations(), Limits(), None)
    outcome = await Reverter(engine, files, FileLocks()).revert(call_id)
    assert not outcome.conflicts, outcome.conflicts
