"""What each command's processes changed, as the kernel names the writers
(procs/process_writes.py, fs/fanotify.py, procs/forks.py): real processes, real events.
These need the privileges the kernel asks for (root, as in CI); elsewhere they skip."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_server.procs import process_writes
from lsp_server.procs.process_writes import WriteTracker, Written
from tests.conftest import missing_part


@pytest.fixture
def tracker(tmp_path: Path) -> Iterator[WriteTracker]:
    found = process_writes.shared()
    if found is None:
        missing_part(f"the kernel names no writer here: {process_writes.unavailable()}")
    found.expect(tmp_path)
    yield found
    found.release(tmp_path)


def start(command: str, cwd: Path, tracker: WriteTracker) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(["sh", "-c", command], cwd=cwd)
    tracker.claim(process.pid)
    return process


def test_each_tree_keeps_exactly_its_own_changes(tmp_path: Path, tracker: WriteTracker) -> None:
    (tmp_path / "shared.txt").write_text("")
    a = start(
        "sleep 0.2; echo A >> a.txt; (sleep 0.3; echo late > daemon.txt) & "
        "mkdir -p made/deeper; echo x > made/deeper/f; sed -i s/A/AA/ a.txt",
        tmp_path,
        tracker,
    )
    b = start("echo B >> b.txt; mv b.txt moved.txt", tmp_path, tracker)
    (tmp_path / "by-this-process.txt").write_text("not a command's")
    assert a.wait() == 0 and b.wait() == 0
    subprocess.run(["sh", "-c", "sleep 0.6"], check=True)  # the daemon's write, after its parent

    of_a, of_b = tracker.written(a.pid), tracker.written(b.pid)
    assert of_a.complete and of_b.complete
    assert of_a.covers(str(tmp_path / "a.txt"))
    assert of_a.covers(str(tmp_path / "daemon.txt"))  # a daemon is still its command's
    assert of_a.covers(str(tmp_path / "made/deeper/f"))  # a folder it made covers its files
    assert not of_a.covers(str(tmp_path / "b.txt"))
    assert of_b.covers(str(tmp_path / "b.txt")) and of_b.covers(str(tmp_path / "moved.txt"))
    assert not of_b.covers(str(tmp_path / "a.txt"))
    for written in (of_a, of_b):
        assert not written.covers(str(tmp_path / "by-this-process.txt"))
        assert not written.covers(str(tmp_path / "shared.txt"))


def test_a_moved_folder_covers_what_is_beneath_both_names(
    tmp_path: Path, tracker: WriteTracker
) -> None:
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "kept.txt").write_text("k")
    process = start("mv old new", tmp_path, tracker)
    assert process.wait() == 0
    written = tracker.written(process.pid)
    assert written.covers(str(tmp_path / "old" / "kept.txt"))
    assert written.covers(str(tmp_path / "new" / "kept.txt"))


def test_changes_outside_the_expected_folders_are_not_kept(
    tmp_path: Path, tracker: WriteTracker, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    process = start(f"echo x > '{elsewhere}/out.txt'; echo y > in.txt", tmp_path, tracker)
    assert process.wait() == 0
    written = tracker.written(process.pid)
    assert written.paths == {str(tmp_path / "in.txt")}


def test_a_root_never_claimed_is_nobodys(tmp_path: Path, tracker: WriteTracker) -> None:
    assert tracker.written(999_999_999) == Written()


def test_an_overflow_of_the_kernels_queue_makes_every_open_tree_incomplete(
    tmp_path: Path, tracker: WriteTracker
) -> None:
    limit = int(Path("/proc/sys/fs/fanotify/max_queued_events").read_text())
    command = f"mkdir many && cd many && seq {limit + 100} | xargs touch"
    with tracker._lock:  # the reader held up while more changes come than the queue holds
        process = subprocess.Popen(["sh", "-c", command], cwd=tmp_path)
        assert process.wait() == 0
    tracker.claim(process.pid)
    assert not tracker.written(process.pid).complete


def test_a_commands_changes_stay_claimed_until_it_is_recorded(
    tmp_path: Path, tracker: WriteTracker
) -> None:
    """Reading what a command wrote does not forget it: until its checkpoint is recorded
    (`unclaim`), a command recorded meanwhile must still find those changes claimed, else
    it keeps them as an unknown process's."""
    process = start("echo B >> b.txt", tmp_path, tracker)
    assert process.wait() == 0
    assert tracker.written(process.pid).covers(str(tmp_path / "b.txt"))
    assert tracker.claimed_written().covers(str(tmp_path / "b.txt"))
    tracker.unclaim(process.pid)
    assert not tracker.claimed_written().covers(str(tmp_path / "b.txt"))
