"""glob keeps what it learned of its matches' mtimes while the root's checkpoint watcher
runs (tools/search/glob_memory.py): a later glob of the same pattern stats only what the
watcher heard changed, and answers as a glob that stats everything would."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.checkpoints.watching.fanotify_watch import FanotifyWatcher
from lsp_server.checkpoints.watching.root_budget import max_user_watches
from lsp_server.checkpoints.watching.watcher import TreeWatcher
from lsp_server.fs import inotify
from lsp_server.runtime.dispatch import Runtime
from tests.checkpoints.test_fanotify_watch import require_fanotify
from tests.helpers import call_tool, make_runtime, text_of

FILES = 200


@pytest.fixture
def stats(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The stats glob's ripgrep listing makes of its matches (relative, beneath a folder)."""
    made: list[str] = []
    real = os.stat

    def counted(path: Any, *args: Any, dir_fd: int | None = None, **kwargs: Any) -> Any:
        if dir_fd is not None and isinstance(path, str) and path.endswith(".txt"):
            made.append(path)
        return real(path, *args, dir_fd=dir_fd, **kwargs)

    monkeypatch.setattr(os, "stat", counted)
    return made


def make_files(root: Path) -> None:
    """FILES files, each a second older than the one before."""
    for n in range(FILES):
        path = root / f"d{n % 7}" / f"f{n:03}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{n}\n")
        os.utime(path, (1_700_000_000 - n, 1_700_000_000 - n))


async def glob(runtime: Runtime) -> list[str]:
    text = text_of(await call_tool(runtime, "glob", {"pattern": "**/*.txt"}))
    return [line for line in text.splitlines() if not line.startswith("[")]


async def started(root: Path) -> Runtime:
    """A runtime whose root's watcher runs: started by the first snapshot of a command
    that may write."""
    runtime = make_runtime(root)
    await call_tool(runtime, "bash", {"command": "echo x > made.log"})
    await runtime.services.get(Checkpoints).settle()
    return runtime


async def test_a_later_glob_stats_only_what_changed(tmp_path: Path, stats: list[str]) -> None:
    root = tmp_path / "ws"
    make_files(root)
    runtime = await started(root)
    first = await glob(runtime)
    assert first[:2] == ["d0/f000.txt", "d1/f001.txt"] and len(first) == FILES
    assert len(stats) == FILES
    stats.clear()
    assert await glob(runtime) == first
    assert stats == []  # nothing changed: every mtime from the first listing
    old = first[-1]
    (root / old).write_text("written now\n")  # the oldest becomes the newest
    (root / first[0]).unlink()
    (root / "d3" / "new.txt").write_text("new\n")
    os.utime(root / first[1], (1_600_000_000, 1_600_000_000))  # made older: ATTRIB
    later = await glob(runtime)
    assert sorted(stats) == sorted([old, "d3/new.txt", first[1]])
    assert later[:2] in ([old, "d3/new.txt"], ["d3/new.txt", old])
    assert first[0] not in later and later[-1] == first[1]
    assert later == await fresh_glob(root)


async def test_what_no_event_speaks_for_is_looked_at_each_time(
    tmp_path: Path, stats: list[str]
) -> None:
    """A file with a second name outside the root (a write there reaches no watched folder)
    is looked at on every glob; events dropped, the whole listing is again."""
    root = tmp_path / "ws"
    make_files(root)
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    os.utime(outside, (1_500_000_000, 1_500_000_000))
    os.link(outside, root / "d6" / "linked.txt")
    runtime = await started(root)
    assert (await glob(runtime))[-1] == "d6/linked.txt"
    stats.clear()
    outside.write_text("written through the other name")
    assert (await glob(runtime))[0] == "d6/linked.txt"
    assert stats == ["d6/linked.txt"]
    watcher = runtime.services.get(Checkpoints).watchers.running(root)
    assert isinstance(watcher, TreeWatcher)
    watcher.feed(inotify.record(0, inotify.IN_Q_OVERFLOW))
    stats.clear()
    await glob(runtime)
    assert len(stats) == FILES + 1


async def test_without_a_watcher_nothing_is_kept(tmp_path: Path, stats: list[str]) -> None:
    root = tmp_path / "ws"
    make_files(root)
    runtime = make_runtime(root)  # no command yet: no snapshot, no watcher
    await glob(runtime)
    await glob(runtime)
    assert len(stats) == 2 * FILES


async def fresh_glob(root: Path) -> list[str]:
    """The same glob by a new runtime, which stats every match."""
    return await glob(make_runtime(root))


async def test_through_a_fanotify_filesystem_mark(tmp_path: Path, stats: list[str]) -> None:
    """A root too big for the inotify share, watched by one fanotify mark (root here)."""
    require_fanotify()
    root = tmp_path / "ws"
    make_files(root)
    share = 1.5 / max_user_watches()
    runtime = make_runtime(root, {"checkpoints": {"watch_share": share}})
    await call_tool(runtime, "bash", {"command": "echo x > made.log"})
    await runtime.services.get(Checkpoints).settle()
    assert isinstance(runtime.services.get(Checkpoints).watchers.running(root), FanotifyWatcher)
    first = await glob(runtime)
    stats.clear()
    assert await glob(runtime) == first and stats == []
    (root / first[-1]).write_text("written now\n")
    assert (await glob(runtime))[0] == first[-1]
    assert stats == [first[-1]]
