"""The parser pool of a large build: a worker that dies costs one file, workers run at the
priority asked for, a killed `toolhost index` leaves only whole files, and the order of
results does not depend on which worker finished first."""

from __future__ import annotations

import contextlib
import faulthandler
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lsp_server.codeintel import index as index_module
from lsp_server.codeintel import languages, pool
from lsp_server.codeintel.index import PARALLEL_MIN_FILES, SymbolIndex, default_index_path
from lsp_server.codeintel.indexes import BACKGROUND_NICENESS, CodeIndexService
from lsp_server.codeintel.outline import symbol_rows
from lsp_server.codeintel.parsing import FileResult, index_batch
from tests.codeintel.test_index_cli import make_tree

POISON = b"# this file kills the parser\n"


def dying_batch(root: str, batch: list[tuple[str, str | None]]) -> list[FileResult]:
    """A worker task that dies the way a crashing grammar does (SIGSEGV) on a marked file:
    no grammar crashes on demand, so the crash is induced here."""
    for rel, _ in batch:
        if (Path(root) / rel).read_bytes().startswith(POISON):
            faulthandler.disable()  # pytest's: the death is expected, no dump to stderr
            os.kill(os.getpid(), signal.SIGSEGV)
    return index_batch(root, batch)


def niceness_recording_batch(root: str, batch: list[tuple[str, str | None]]) -> list[FileResult]:
    """A worker task that notes the worker's nice value beside the tree."""
    Path(root, "..", f"nice-{os.getpid()}").write_text(str(os.nice(0)), encoding="utf-8")
    return index_batch(root, batch)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["fork", "forkserver"])
def test_a_worker_that_dies_costs_one_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    """`fork` is what `toolhost index` uses, `forkserver` what the server (threads) uses."""
    monkeypatch.setattr(pool, "start_method", lambda: method)
    root = tmp_path / "ws"
    make_tree(root, PARALLEL_MIN_FILES + 10)
    poison = root / "pkg3" / "poison.py"
    poison.write_bytes(POISON + b"def never_seen():\n    pass\n")
    index = SymbolIndex(root, tmp_path / "i.sqlite", workers=2, batch_task=dying_batch)

    stats = index.refresh()

    assert stats.parsed == PARALLEL_MIN_FILES + 10
    assert index.is_complete
    assert len(index.symbols_under("")) == 3 * (PARALLEL_MIN_FILES + 10)
    assert index.symbols_under("pkg3/poison.py") == []
    assert index.store.file_state("pkg3/poison.py") is not None  # known, not retried
    assert index.refresh().parsed == 0
    # Once the file changes it is parsed again.
    poison.write_text("def now_seen():\n    pass\n", encoding="utf-8")
    assert index.refresh().parsed == 1
    assert [s.name for _, s in index.search("now_seen")] == ["now_seen"]
    index.close()


def test_workers_run_at_the_niceness_asked_for(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, PARALLEL_MIN_FILES + 10)
    index = SymbolIndex(
        root, tmp_path / "i.sqlite", workers=2, niceness=5, batch_task=niceness_recording_batch
    )
    index.refresh()
    index.close()
    seen = {int(p.read_text()) for p in tmp_path.glob("nice-*")}
    assert seen == {os.nice(0) + 5}


def test_background_builds_leave_a_core_and_yield_the_cpu(tmp_path: Path) -> None:
    """The server's builds: one parser process fewer than the cores (at least one), niced;
    `toolhost index` (SymbolIndex's default): every core, normal priority."""
    service = CodeIndexService(tmp_path / "state")
    (tmp_path / "ws").mkdir()
    index = service.index_for(tmp_path / "ws")
    assert index.workers == max(1, (os.cpu_count() or 1) - 1)
    assert index.niceness == BACKGROUND_NICENESS > 0
    service.close()
    standalone = SymbolIndex(tmp_path / "ws", tmp_path / "s.sqlite")
    assert (standalone.workers, standalone.niceness) == (os.cpu_count() or 1, 0)
    standalone.close()


def test_parallel_results_keep_the_inline_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches finish in any order; what a query returns does not: search ties are broken
    by path then line, a file's symbols come in source order (not by name)."""
    root = tmp_path / "ws"
    count = PARALLEL_MIN_FILES + 30
    for n in range(count):
        folder = root / f"p{n % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{n}.go").write_text(
            f"package p\n\nfunc Tie{n}b() {{}}\n\nfunc Tie{n}a() {{}}\n\nfunc Tie() {{}}\n",
            encoding="utf-8",
        )
    parallel = SymbolIndex(root, tmp_path / "p.sqlite", workers=2)
    parallel.refresh()
    monkeypatch.setattr(index_module, "PARALLEL_MIN_FILES", 10 * count)
    inline = SymbolIndex(root, tmp_path / "i.sqlite", workers=2)
    inline.refresh()
    assert parallel.symbols_under("") == inline.symbols_under("")
    first = parallel.symbols_under("p0/f0.go")
    assert [s.name for _, s in first] == ["Tie0b", "Tie0a", "Tie"]
    found = parallel.search("Tie", limit=10 * count)
    assert found == inline.search("Tie", limit=10 * count)
    exact = [path for path, symbol in found if symbol.name == "Tie"]
    assert exact == sorted(exact) and len(exact) == count
    parallel.close()
    inline.close()


def _whole_files_only(db_path: Path, root: Path) -> tuple[int, bool]:
    """(files stored, complete flag); asserts each stored file has all its symbols."""
    with sqlite3.connect(db_path) as db:
        files = db.execute("SELECT path, hash FROM files").fetchall()
        for path, _ in files:
            spec = languages.language_for_path(path)
            assert spec is not None
            stored = db.execute(
                "SELECT name, kind, parent, start_line, end_line, start_byte, end_byte, "
                "signature, language FROM symbols WHERE path = ? ORDER BY rowid",
                (path,),
            ).fetchall()
            assert stored == symbol_rows(spec.name, (root / path).read_bytes()), path
        orphans = db.execute(
            "SELECT count(*) FROM symbols WHERE path NOT IN (SELECT path FROM files)"
        ).fetchone()[0]
        assert orphans == 0
        complete = db.execute("SELECT value FROM meta WHERE key = 'complete'").fetchone()
    return len(files), complete is not None


@pytest.mark.slow
def test_a_killed_index_run_leaves_only_whole_files(tmp_path: Path) -> None:
    """`toolhost index` killed mid-build (SIGKILL: no clean-up runs): each batch went in
    one transaction, so every file the index holds has all its symbols, and the index
    does not claim to be complete."""
    root = tmp_path / "ws"
    count = 800
    for n in range(count):
        folder = root / f"pkg{n % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        body = "".join(f"    def m{k}(self):\n        return {k}\n\n" for k in range(40))
        (folder / f"mod{n}.py").write_text(f"class C{n}:\n{body}", encoding="utf-8")
    state = tmp_path / "state"
    env = dict(os.environ, TOOLHOST_STATE_DIR=str(state))
    db_path = default_index_path(root, state)
    # Two parser processes: on a many-core machine all batches could land at once.
    command = [sys.executable, "-m", "lsp_server.cli", "index", "--root", str(root), "--jobs", "2"]
    child = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and child.poll() is None:
            if db_path.exists() and _stored_files(db_path) > 0:
                break
            time.sleep(0.005)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)  # its parser processes
    assert child.returncode == -signal.SIGKILL, "the build ended before it was killed"
    stored, complete = _whole_files_only(db_path, root)
    assert 0 < stored < count
    assert not complete
    # The next run finishes the job: it parses only what the killed one did not store.
    again = SymbolIndex(root, db_path)
    assert again.refresh().parsed == count - stored
    assert again.is_complete
    again.close()


def _stored_files(db_path: Path) -> int:
    try:
        with sqlite3.connect(db_path, timeout=0.1) as db:
            return int(db.execute("SELECT count(*) FROM files").fetchone()[0])
    except sqlite3.Error:
        return 0
