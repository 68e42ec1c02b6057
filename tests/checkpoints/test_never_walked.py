"""Every walk of a root follows one rule (docs/CHECKPOINTS.md, "What is never walked"):
toolhost's own folders (the state folder inside an allowed home folder), other file systems
mounted inside the root, and `/proc`, `/sys`, `/dev` are not entered: by the checkpoints'
measure (test_root_budget.py), by the start-up sweep of leftover temp files, nor by the
sandbox's look one folder down for protected names."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_server.fs import leftover_temps
from lsp_server.fs.leftover_temps import SUFFIX, SweepReport, sweep
from lsp_server.sandbox import protected_scan
from lsp_server.sandbox.protected import ProtectedPaths
from tests.helpers import in_own_mounts

DEAD = f".a.txt.999999999-1.0123abcd{SUFFIX}"
"""A temp name of a process that does not exist (its pid is over the kernel's limit)."""


def test_the_temp_sweep_leaves_own_and_system_folders_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    state = home / ".local" / "state" / "toolhost"
    system = home / "sysfake"  # stands for /proc: a root that is `/` holds it
    for folder in (home / "src", state / "checkpoints", system / "deep"):
        folder.mkdir(parents=True)
        (folder / DEAD).write_text("half a write")
    (home / DEAD).write_text("half a write")
    monkeypatch.setattr(leftover_temps, "NEVER_WALKED", frozenset((str(system),)))
    report = sweep([home], SweepReport(), kept_out=[state])
    assert sorted(report.removed) == sorted([str(home / DEAD), str(home / "src" / DEAD)])
    assert (state / "checkpoints" / DEAD).exists() and (system / "deep" / DEAD).exists()
    assert report.folders == 4  # home, src, .local, .local/state: not toolhost, not sysfake


def test_the_sandbox_scan_does_not_look_into_system_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    (root / "proc" / ".git").mkdir(parents=True)
    (root / "work" / ".git").mkdir(parents=True)
    listed: list[Path] = []
    listing = protected_scan._listing

    def recorded(folder: Path) -> list[str]:
        listed.append(folder)
        return listing(folder)

    monkeypatch.setattr(protected_scan, "_listing", recorded)
    monkeypatch.setattr(protected_scan, "NEVER_WALKED", frozenset((str(root / "proc"),)))
    binds = protected_scan.scan_root(root, ProtectedPaths())
    assert root / "work" / ".git" in binds.present
    assert root / "proc" not in listed and root / "proc" / ".git" not in binds.present


_MOUNTED = """
import sys
from pathlib import Path
sys.path.insert(0, {repo!r})
from lsp_server.fs.leftover_temps import SweepReport, sweep
root = Path({root!r})
report = sweep([root], SweepReport())
assert report.removed == [str(root / {dead!r})], report.removed
assert (root / "mnt" / {dead!r}).exists()
assert report.folders == 2, report.folders  # the root and proc_like, not mnt nor the bound /proc
print("ok")
"""


def test_the_temp_sweep_stays_on_the_roots_file_system(tmp_path: Path) -> None:
    """A tmpfs mounted inside the root and /proc bound there (in a mount namespace of the
    test's own): the sweep enters neither."""
    root = tmp_path / "ws"
    (root / "mnt").mkdir(parents=True)
    (root / "proc_like").mkdir()
    (root / DEAD).write_text("x")
    script = _MOUNTED.format(repo=str(Path.cwd()), root=str(root), dead=DEAD)
    setup = (
        f"mount -t tmpfs none {root}/mnt && echo x > {root}/mnt/{DEAD} && "
        f"mkdir {root}/proc_like/proc && mount --bind /proc {root}/proc_like/proc"
    )
    done = in_own_mounts(setup, script)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


def test_a_root_is_swept_only_after_a_writer_died_there(tmp_path: Path) -> None:
    """A start after clean ends walks nothing (the checkpoints' measure is the one walk of
    a large root); a note left by a writer that died names the roots to sweep, and goes
    once they are swept (the roots it names that this start does not serve stay in it)."""
    state, mine, other = tmp_path / "state", tmp_path / "mine", tmp_path / "other"
    for root in (mine, other):
        (root / "src").mkdir(parents=True)
        (root / "src" / DEAD).write_text("half a write")
    report = leftover_temps.sweep_after_crashes([mine], state, SweepReport())
    assert report.done and report.folders == 0 and (mine / "src" / DEAD).exists()
    live = leftover_temps.note_writer(state, [mine])  # this process: alive
    assert live is not None and live.read_bytes() == os.fsencode(mine) + b"\0"
    report = leftover_temps.sweep_after_crashes([mine], state, SweepReport())
    assert report.folders == 0 and (mine / "src" / DEAD).exists()
    dead = state / leftover_temps.WRITERS / "999999999-1"
    dead.write_bytes(os.fsencode(mine) + b"\0" + os.fsencode(other) + b"\0")
    report = leftover_temps.sweep_after_crashes([mine], state, SweepReport())
    assert report.removed == [str(mine / "src" / DEAD)] and report.folders == 2
    assert (other / "src" / DEAD).exists()  # not served by this start
    assert dead.read_bytes() == os.fsencode(other) + b"\0"
    report = leftover_temps.sweep_after_crashes([other], state, SweepReport())
    assert report.removed == [str(other / "src" / DEAD)] and not dead.exists()


def test_a_runtime_that_ends_cleanly_leaves_no_note(tmp_path: Path) -> None:
    """`toolhost call` (a runtime of its own) notes its root while it runs and removes
    the note as it ends: the next start has nothing to sweep."""
    root, state = tmp_path / "ws", tmp_path / "state"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    env = {**os.environ, "TOOLHOST_STATE_DIR": str(state)}
    command = [sys.executable, "-m", "lsp_server.cli", "call", "--root", str(root)]
    done = subprocess.run(
        [*command, "read_file", '{"path": "a.txt"}'],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert list((state / leftover_temps.WRITERS).iterdir()) == []
