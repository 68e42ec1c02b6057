"""The CLI's kept sessions (runtime/sessions/session_files.py) without a subprocess: two
stores on one folder stand for two `toolhost call` processes, so their interleaving is exact."""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

from lsp_server.fs.textio import FileVersion
from lsp_server.runtime.sessions.session import SessionStore
from lsp_server.runtime.sessions.session_bounds import SessionBounds, kept_sessions
from lsp_server.runtime.sessions.session_files import SessionFiles
from lsp_server.runtime.sessions.stored_results import SPILL_BYTES


def process(state: Path, root: Path, bounds: SessionBounds | None = None) -> SessionStore:
    """What one `toolhost call` builds: a session store over the kept sessions of `root`."""
    return SessionStore(root, 64, None, SessionFiles(state, root, bounds))


def last_used(tmp_path: Path, name: str, seconds_ago: float) -> None:
    """Date a session's last save back (file times tick too coarsely to order quick saves)."""
    [folder] = [s.folder for s in kept_sessions(tmp_path) if s.folder.name.startswith(name)]
    when = time.time() - seconds_ago
    os.utime(folder / "session.json", (when, when))


def version(size: int) -> FileVersion:
    return FileVersion(1, 2, size, 3, 4, f"{size:064x}")


def test_two_processes_on_one_session_keep_both_their_reads(tmp_path: Path) -> None:
    one, two = process(tmp_path, tmp_path), process(tmp_path, tmp_path)
    first, second = one.get("s"), two.get("s")  # both loaded the same (empty) session
    first.observations.record_present(tmp_path / "a", version(1))
    second.observations.record_present(tmp_path / "b", version(2))
    one.save()
    two.save()  # a plain overwrite would lose `a`
    merged = process(tmp_path, tmp_path).get("s").observations
    assert merged.get(tmp_path / "a") is not None and merged.get(tmp_path / "b") is not None
    assert merged.get(tmp_path / "b").version == version(2)  # type: ignore[union-attr]


def test_two_processes_never_hand_out_the_same_ref(tmp_path: Path) -> None:
    one, two = process(tmp_path, tmp_path), process(tmp_path, tmp_path)
    first = one.get("s").results.store("from one")
    second = two.get("s").results.store("from two")
    assert (first, second) == ("r-s-1", "r-s-2")
    one.save()
    two.save()
    later = process(tmp_path, tmp_path).get("s").results
    assert later.page(first).text == "from one" and later.page(second).text == "from two"


def test_the_total_bytes_bound_drops_the_oldest_sessions(tmp_path: Path) -> None:
    bounds = SessionBounds(total_bytes=300_000)
    for age, name in enumerate("abcd"):
        store = process(tmp_path, tmp_path, bounds)
        store.get(name).results.store(name * 100_000)
        store.save()
        last_used(tmp_path, name, 100 - age)
    kept = sorted(s.folder.name.split("~")[0] for s in kept_sessions(tmp_path))
    assert kept == ["c", "d"]
    assert sum(s.size for s in kept_sessions(tmp_path)) <= bounds.total_bytes


def test_one_session_over_the_bytes_bound_keeps_its_newest_results(tmp_path: Path) -> None:
    store = process(tmp_path, tmp_path, SessionBounds(total_bytes=250_000))
    results = store.get("s").results
    refs = [results.store(letter * 100_000) for letter in "xyz"]
    store.save()
    later = process(tmp_path, tmp_path).get("s").results
    assert [item.ref for item in later.items()] == refs[1:]
    assert sum(s.size for s in kept_sessions(tmp_path)) <= 250_000


def test_a_session_another_process_holds_is_not_pruned(tmp_path: Path) -> None:
    bounds = SessionBounds(per_root=1)
    busy = process(tmp_path, tmp_path, bounds)
    busy.get("busy")
    busy.save()
    last_used(tmp_path, "busy", 60)
    [folder] = (s.folder for s in kept_sessions(tmp_path))
    fd = os.open(folder / "lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        other = process(tmp_path, tmp_path, bounds)
        other.get("other")
        other.save()
        assert folder.is_dir()
    finally:
        os.close(fd)
    again = process(tmp_path, tmp_path, bounds)
    again.get("other")
    again.save()
    assert not folder.exists()


def test_an_unreadable_session_file_is_an_empty_session(tmp_path: Path) -> None:
    store = process(tmp_path, tmp_path)
    store.get("s").observations.record_present(tmp_path / "a", version(1))
    store.save()
    [kept] = kept_sessions(tmp_path)
    for garbage in ("{", '{"format": 1, "observations": [{"path": "rel"}], "results": []}', "[]"):
        (kept.folder / "session.json").write_text(garbage)
        assert len(process(tmp_path, tmp_path).get("s").observations) == 0


def test_a_record_cannot_point_a_result_outside_its_folder(tmp_path: Path) -> None:
    store = process(tmp_path, tmp_path)
    store.get("s")
    store.save()
    [kept] = kept_sessions(tmp_path)
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    forged = {"ref": "../../../secret.txt", "number": 1, "size": 6, "sha256": "0" * 64}
    record = json.loads((kept.folder / "session.json").read_text())
    record["results"] = [dict(forged, file=str(outside))]
    (kept.folder / "session.json").write_text(json.dumps(record))
    [item] = process(tmp_path, tmp_path).get("s").results.items()
    assert item.spill_path is not None and item.spill_path.parent == kept.folder / "results"


def test_odd_session_ids_spill_results_inside_the_server_state_folder(tmp_path: Path) -> None:
    spill = tmp_path / "results"
    store = SessionStore(tmp_path, 4, spill)
    for session_id in ("a\x00b", "\ud800/../x", "../../etc", "a/b"):
        results = store.get(session_id).results
        ref = results.store("z" * (SPILL_BYTES + 1))
        assert ref.isascii() and "/" not in ref and "\x00" not in ref, ref
        assert results.page(ref, limit=3).text == "zzz"
    folders = list(spill.iterdir())
    assert len(folders) == 4 and all(f.parent == spill and "~" in f.name for f in folders)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]


def test_approvals_for_a_session_are_kept_per_root_and_session_privately(tmp_path: Path) -> None:
    """What a person allowed "for this session" at the CLI prompt: added to, read back by a
    later process of the same root and session only, private, dropped by --fresh; a broken
    file is no approval (the person is asked again)."""
    root, other_root = tmp_path / "ws", tmp_path / "other"
    state = tmp_path / "state"
    SessionFiles(state, root).keep_approvals("s", ["bash(npm test)"])
    SessionFiles(state, root).keep_approvals("s", ["Edit(/a.py)", "bash(npm test)"])
    later = SessionFiles(state, root)
    assert later.approvals("s") == ["bash(npm test)", "Edit(/a.py)"]
    assert later.approvals("t") == [] and SessionFiles(state, other_root).approvals("s") == []
    kept = later.session_folder("s") / "approvals.json"
    assert kept.stat().st_mode & 0o777 == 0o600
    kept.write_text("{not json")
    assert later.approvals("s") == []
    kept.write_text(json.dumps({"rules": ["bash(ls)", 7]}))
    assert later.approvals("s") == ["bash(ls)"]
    later.drop("s")
    assert later.approvals("s") == []
