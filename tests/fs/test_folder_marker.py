"""Many folder marks placed by a child process on the server's own fanotify group
(fs/folder_marker.py): what the server then reads is what it would have read had it placed
them itself."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lsp_server.fs import folder_marker, inotify
from lsp_server.fs.fanotify_folders import FanotifyFolders
from lsp_server.fs.folder_marker import add_watches_probing
from lsp_server.fs.inotify import InotifyError


def folders(tmp_path: Path, count: int) -> list[str]:
    """`count` folders (the fourth holding a .git), a missing path sixth."""
    made = []
    tmp_path.mkdir(exist_ok=True)
    for index in range(count):
        folder = tmp_path / f"d{index}"
        folder.mkdir()
        made.append(str(folder))
    (tmp_path / "d3" / ".git").mkdir()  # the probe's name
    return [*made[:5], str(tmp_path / "gone"), *made[5:]]


def events_until(marks: FanotifyFolders, wanted: int) -> list[inotify.Event]:
    found: list[inotify.Event] = []
    deadline = time.monotonic() + 10
    while len(found) < wanted and time.monotonic() < deadline:
        found += marks.read()
        time.sleep(0.01)
    return found


def check(marks: FanotifyFolders, paths: list[str]) -> None:
    """Each folder marked, its probe and change time right; the missing path refused with
    ENOENT, and the marks after it placed; an event names its folder's wd."""
    placed = list(add_watches_probing(marks, paths, ".git"))
    assert len(placed) == len(paths)
    refused = placed[5]
    assert isinstance(refused, InotifyError) and refused.errno == errno.ENOENT
    wds = {}
    for path, outcome in zip(paths, placed, strict=True):
        if path.endswith("gone"):
            continue
        assert not isinstance(outcome, InotifyError), outcome
        wd, found, changed = outcome
        assert found == path.endswith("/d3")
        assert changed == os.stat(path).st_ctime_ns
        wds[path] = wd
    assert len(set(wds.values())) == len(wds)
    Path(paths[7], "new.txt").write_text("x\n")
    read = events_until(marks, 1)
    assert (wds[paths[7]], "new.txt") in {(event.wd, event.name) for event in read}


def test_a_child_places_the_marks_on_the_servers_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(folder_marker, "CHILD_FROM", 1)
    marks = FanotifyFolders()

    def not_here(self: FanotifyFolders, path: str, probe: str | None) -> object:
        raise AssertionError(f"{path} marked in the server's process")

    monkeypatch.setattr(FanotifyFolders, "place", not_here)  # (the child's is its own)
    try:
        check(marks, folders(tmp_path, 12))
    finally:
        marks.close()


@pytest.mark.parametrize("child", ["/nonexistent/python", "/bin/true"])
def test_without_a_child_the_server_places_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, child: str
) -> None:
    """A child that cannot start, or ends without answering: the server marks the rest."""
    monkeypatch.setattr(folder_marker, "CHILD_FROM", 1)
    monkeypatch.setattr(sys, "executable", child)
    marks = FanotifyFolders()
    try:
        check(marks, folders(tmp_path, 12))
    finally:
        marks.close()


def test_a_refusal_that_ends_the_marking_stops_the_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The caller stops at a refusal it cannot skip (here /proc: no file handles there);
    closing what it was reading stops the child, which leaves no process behind."""
    monkeypatch.setattr(folder_marker, "CHILD_FROM", 1)
    started: list[subprocess.Popen[bytes]] = []
    popen = subprocess.Popen

    def recorded(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        started.append(popen(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(subprocess, "Popen", recorded)
    paths = [*folders(tmp_path, 3000)[:5], "/proc", *folders(tmp_path / "more", 3000)]
    marks = FanotifyFolders()
    try:
        placed = add_watches_probing(marks, paths, ".git")
        outcomes = [next(placed) for _ in range(6)]
        assert isinstance(outcomes[5], InotifyError) and outcomes[5].errno == errno.EOPNOTSUPP
        placed.close()
        assert len(started) == 1 and started[0].returncode is not None  # ended and reaped
        assert not Path(f"/proc/{started[0].pid}").exists()
    finally:
        marks.close()
