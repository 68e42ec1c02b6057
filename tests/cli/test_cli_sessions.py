"""`toolhost call` sessions last between invocations, driven as a user drives them: one
process per call. What a session read authorises its later writes (same --session, same
--root, file unchanged); its stored results page in later calls; the kept sessions stay
within their bounds; no session id can reach outside the state folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lsp_server.runtime.sessions.session_bounds import SessionBounds, kept_sessions

TOOLHOST = [sys.executable, "-m", "lsp_server"]


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "x.py").write_text("x = 1\n")
    return folder


def call(
    state: Path, root: Path, name: str, arguments: object, *flags: str | bytes
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TOOLHOST, "call", name, json.dumps(arguments), "--root", str(root), *flags],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "TOOLHOST_STATE_DIR": str(state)},
        timeout=120,
        check=False,
    )


def edit(state: Path, root: Path, old: str, new: str, *flags: str | bytes) -> str:
    done = call(
        state, root, "edit_file", {"path": "x.py", "old_string": old, "new_string": new}, *flags
    )
    return done.stdout


def read(state: Path, root: Path, *flags: str | bytes) -> None:
    done = call(state, root, "read_file", {"path": "x.py"}, *flags)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_a_read_authorises_the_edit_of_a_later_invocation_of_that_session_only(
    state: Path, root: Path, tmp_path: Path
) -> None:
    read(state, root, "--session", "s1")
    refused = edit(state, root, "x = 1", "x = 2", "--session", "s2", "--yes")
    assert refused.startswith("FS_NOT_OBSERVED: x.py exists but this session has not read it")
    other_root = tmp_path / "elsewhere"
    shutil.copytree(root, other_root)
    other = edit(state, other_root, "x = 1", "x = 2", "--session", "s1", "--yes")
    assert other.startswith("FS_NOT_OBSERVED"), other
    edited = edit(state, root, "x = 1", "x = 2", "--session", "s1", "--yes")
    assert edited.startswith("edited x.py"), edited
    assert (root / "x.py").read_text() == "x = 2\n"
    # The write itself is observed: the next invocation edits on without reading again.
    again = edit(state, root, "x = 2", "x = 3", "--session", "s1", "--yes")
    assert again.startswith("edited x.py"), again


@pytest.mark.slow
def test_the_readme_cli_example_runs(tmp_path: Path) -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    section = readme.split("## Using it from the command line")[1].split("```")[1]
    steps = [line for line in section.splitlines() if "/tmp/demo" in line]
    assert len(steps) == 3, steps  # make the file, read it, edit it
    demo = tmp_path / "demo"
    env = {**os.environ, "TOOLHOST_STATE_DIR": str(tmp_path / "state")}
    for step in steps:
        command = step.replace("/tmp/demo", str(demo)).replace(
            ".venv/bin/toolhost", f"{sys.executable} -m lsp_server"
        )
        done = subprocess.run(
            command,
            shell=True,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            env=env,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, (step, done.stdout, done.stderr)
    assert (demo / "x.py").read_text() == "x = 2\n"


@pytest.mark.slow
def test_a_file_changed_between_invocations_is_refused_as_stale(state: Path, root: Path) -> None:
    read(state, root)
    target = root / "x.py"
    seen = target.stat()
    target.write_text("y = 1\n")  # same size, and the old times put back: only bytes differ
    os.utime(target, ns=(seen.st_atime_ns, seen.st_mtime_ns))
    stale = edit(state, root, "y = 1", "y = 2", "--yes")
    assert stale.startswith("FS_STALE_VERSION: x.py changed since this session read it"), stale
    assert target.read_text() == "y = 1\n"


@pytest.mark.slow
def test_fresh_forgets_what_the_session_read(state: Path, root: Path) -> None:
    read(state, root)
    forgotten = edit(state, root, "x = 1", "x = 2", "--yes", "--fresh")
    assert forgotten.startswith("FS_NOT_OBSERVED"), forgotten


@pytest.mark.slow
def test_a_result_ref_of_one_invocation_pages_in_the_next(state: Path, root: Path) -> None:
    lines = [f"line {n:05d} " + "x" * 20 for n in range(3000)]
    (root / "big.txt").write_text("\n".join(lines) + "\n")
    first = call(state, root, "read_file", {"path": "big.txt"}, "--session", "pager")
    assert "is stored as result_ref r-pager-1;" in first.stdout, first.stdout[-600:]
    page = {"result_ref": "r-pager-1", "offset": 0, "limit": 200}
    paging = {"id": "session:tool_result", "action": "call", "arguments": page}
    later = call(state, root, "use_capability", paging, "--session", "pager")
    assert later.returncode == 0, later.stdout
    assert later.stdout.startswith("[r-pager-1: bytes 0-200 of ")
    assert "1\u2192line 00000 xxx" in later.stdout
    elsewhere = call(state, root, "use_capability", paging, "--session", "another")
    assert elsewhere.stdout.startswith("result.not_found: no stored result 'r-pager-1'")


@pytest.mark.slow
def test_stored_results_per_session_stay_within_stored_results(state: Path, root: Path) -> None:
    (root / ".toolhost.toml").write_text("[limits]\nstored_results = 2\nmax_output_chars = 2000\n")
    (root / "big.txt").write_text("".join(f"line {n}\n" for n in range(2000)))
    refs = []
    for _ in range(3):
        done = call(state, root, "read_file", {"path": "big.txt"})
        refs.append(done.stdout.split("result_ref ")[1].split(";")[0])
    assert refs == ["r-cli-1", "r-cli-2", "r-cli-3"]
    [folder] = (state / "cli-sessions").glob("*/cli~*")
    assert len(list((folder / "results").iterdir())) == 2
    record = json.loads((folder / "session.json").read_text())
    assert [r["ref"] for r in record["results"]] == ["r-cli-2", "r-cli-3"]


@pytest.mark.slow
def test_kept_sessions_stay_within_their_bounds(state: Path, root: Path) -> None:
    read(state, root, "--session", "seed")
    [seed] = (state / "cli-sessions").glob("*/seed~*")
    # Forty older sessions of this root and one of another root, unused for 30 days.
    now = time.time()
    for n in range(40):
        copy = seed.with_name(f"old{n:02d}~{n:016x}")
        shutil.copytree(seed, copy)
        os.utime(copy / "session.json", (now - 3600 - n, now - 3600 - n))
    ancient = state / "cli-sessions" / "gone~0000000000000000" / "s~0000000000000000"
    shutil.copytree(seed, ancient)
    os.utime(ancient / "session.json", (now - 30 * 86400, now - 30 * 86400))
    read(state, root, "--session", "newest")
    kept = sorted(p.name.split("~")[0] for p in seed.parent.iterdir())
    assert len(kept) == 16
    assert "newest" in kept and "seed" in kept
    assert kept == sorted(["newest", "seed", *[f"old{n:02d}" for n in range(14)]])
    assert not ancient.parent.exists()


@pytest.mark.slow
def test_kept_sessions_stay_within_the_total_bytes(state: Path, root: Path) -> None:
    read(state, root, "--session", "seed")
    [seed] = (state / "cli-sessions").glob("*/seed~*")
    # 70 sessions of 1 MiB each (sparse files: counted, not paid for) over 10 other roots.
    now = time.time()
    for n in range(70):
        copy = state / "cli-sessions" / f"r{n % 10}~{n % 10:016x}" / f"s{n:02d}~{n:016x}"
        shutil.copytree(seed, copy)
        with (copy / "big").open("wb") as sparse:
            sparse.truncate(1024 * 1024)
        os.utime(copy / "session.json", (now - 3600 - n, now - 3600 - n))
    read(state, root, "--session", "newest")
    kept = kept_sessions(state / "cli-sessions")
    assert sum(session.size for session in kept) <= SessionBounds().total_bytes
    names = sorted(s.folder.name.split("~")[0] for s in kept)
    survivors = len(names) - 2  # newest and seed, the two most recent, stay
    assert 50 < survivors < 64 and names[:2] == ["newest", "s00"]
    assert names[2:] == [f"s{n:02d}" for n in range(1, survivors)] + ["seed"]


@pytest.mark.slow
def test_concurrent_invocations_on_one_session_lose_no_reads(state: Path, root: Path) -> None:
    names = [f"f{n}.txt" for n in range(6)]
    for name in names:
        (root / name).write_text(f"{name}\n")
    env = {**os.environ, "TOOLHOST_STATE_DIR": str(state)}
    processes = [
        subprocess.Popen(
            [*TOOLHOST, "call", "read_file", json.dumps({"path": n}), "--root", str(root)],
            stdout=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            env=env,
        )
        for n in names
    ]
    assert [p.wait(timeout=120) for p in processes] == [0] * len(names)
    [folder] = (state / "cli-sessions").glob("*/cli~*")
    record = json.loads((folder / "session.json").read_text())
    assert sorted(Path(o["path"]).name for o in record["observations"]) == names


HOSTILE_IDS: list[str | bytes] = ["../x", "a/b", "..", "/etc", b"\xff/../\xfe"]


@pytest.mark.slow
@pytest.mark.parametrize("session", HOSTILE_IDS, ids=repr)
def test_hostile_session_ids_stay_inside_the_state_folder(
    state: Path, root: Path, tmp_path: Path, session: str | bytes
) -> None:
    before = sorted([*(p.name for p in tmp_path.iterdir()), "state"])
    (root / "x.py").write_text("x = 1\n" + "".join(f"y{n} = {n}\n" for n in range(6000)))
    flag = b"--session=" + session if isinstance(session, bytes) else f"--session={session}"
    big = call(state, root, "read_file", {"path": "x.py"}, flag)
    assert big.returncode == 0, big.stderr
    ref = big.stdout.split("result_ref ")[1].split(";")[0]  # stored in the session's folder
    assert ref.isascii() and "/" not in ref, ref
    edited = edit(state, root, "x = 1", "x = 2", "--yes", flag)
    assert edited.startswith("edited x.py"), edited
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    [root_folder] = (state / "cli-sessions").iterdir()
    [folder] = root_folder.iterdir()
    assert "~" in folder.name and not folder.name.startswith(".")
    assert {p.name for p in folder.iterdir()} == {"session.json", "lock", "counter", "results"}
    assert len(list((folder / "results").iterdir())) == 1


def test_a_state_folder_that_cannot_be_written_costs_the_session_not_the_call(
    root: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = call(blocker / "state", root, "read_file", {"path": "x.py"})
    assert done.returncode == 0 and "x = 1" in done.stdout, done.stderr
    assert "toolhost: session 'cli' could not be kept in " in done.stderr
    assert "the next call starts it afresh" in done.stderr
