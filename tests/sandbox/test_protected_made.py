"""Which protected names a command made, from its watcher window (tools/shell/protected_made.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from lsp_server.checkpoints.watching.watcher import TreeWatcher
from lsp_server.sandbox.protected import ProtectedPaths
from lsp_server.tools.shell.protected_made import ProtectedBefore, Watched, made_protected


def _made(root: Path, created: set[str], lost: str | None = None) -> list[str]:
    watcher = TreeWatcher(root)
    watcher.take()
    names = watcher.open_window()
    assert names is not None
    names.created, names.lost = set(created), lost
    before = ProtectedBefore(frozenset(), {root: Watched(watcher, names)})
    return [
        p.relative_to(root).as_posix() for p in made_protected((root,), ProtectedPaths(), before)
    ]


def test_new_names_and_what_new_folders_hold(tmp_path: Path) -> None:
    (tmp_path / "old" / "x" / ".vscode").mkdir(parents=True)  # there before
    (tmp_path / "old" / "x" / ".vscode" / "tasks.json").write_text("{}")
    (tmp_path / "new" / "y" / "z" / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / "new" / "y" / ".envrc").write_text("")
    (tmp_path / "deep" / "a" / "b").mkdir(parents=True)
    (tmp_path / "deep" / "a" / "b" / ".nvim.lua").write_text("")
    (tmp_path / ".envrc").write_text("")  # a placeholder of another command: not touched
    (tmp_path / "link").symlink_to("/usr")
    created = {"new", "deep/a/b/.nvim.lua", "old/x/.vscode/tasks.json", ".envrc", "link"}
    assert _made(tmp_path, created) == ["deep/a/b/.nvim.lua", "new/y/.envrc", "new/y/z/.git"]


def test_a_window_that_lost_events_is_not_used(tmp_path: Path) -> None:
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    (tmp_path / "a" / "b" / "c" / ".envrc").write_text("")
    assert _made(tmp_path, {"a/b/c/.envrc"}, "the kernel dropped events") == []


def test_what_was_made_unreadable_is_looked_at_by_the_next_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`mkdir -p a/b && (make a/b/.git) && chmod 000 a/b`, then `chmod 755 a/b` in a later
    command (which makes no name): the later window still looks at a/b/.git. (The lstat
    is made to fail: root, as tests may run, reads through any mode.)"""
    (tmp_path / "a" / "b" / ".git").mkdir(parents=True)
    hidden = tmp_path / "a" / "b" / ".git"
    real_lstat = os.lstat

    def lstat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if Path(path) == hidden:
            raise PermissionError(13, "Permission denied", str(path))
        return real_lstat(path, *args, **kwargs)

    watcher = TreeWatcher(tmp_path)
    watcher.take()
    first = watcher.open_window()
    assert first is not None
    first.created = {"a/b/.git"}
    with monkeypatch.context() as patched:
        patched.setattr(os, "lstat", lstat)
        before = ProtectedBefore(frozenset(), {tmp_path: Watched(watcher, first)})
        assert made_protected((tmp_path,), ProtectedPaths(), before) == []
    later = watcher.open_window()
    assert later is not None
    before = ProtectedBefore(frozenset(), {tmp_path: Watched(watcher, later)})
    assert made_protected((tmp_path,), ProtectedPaths(), before) == [hidden]
    watcher.close()
