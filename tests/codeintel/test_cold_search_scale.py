"""code_index search before the index exists costs what the name's files cost, not what
the tree holds: only the searched folder is scanned, only the files that mention the name
are parsed, the full build starts after the answer, and a search stopped by its time
limit says so instead of "no definition matches", and answers at that limit: rg lists for
part of it, the rest parses, and no batch still being parsed is waited for."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from lsp_server.codeintel import candidates
from lsp_server.codeintel.index import (
    LISTING_SHARE,
    PARALLEL_MIN_FILES,
    ColdSearch,
    SymbolIndex,
)
from lsp_server.codeintel.indexes import BACKGROUND_NICENESS, CodeIndexService
from lsp_server.codeintel.parsing import FileResult, index_batch
from tests.codeintel.conftest import FIXTURES
from tests.helpers import call_tool, make_runtime, text_of


def tree(root: Path, folders: int = 30, files: int = 20) -> Path:
    for folder in range(folders):
        target = root / f"pkg{folder:02}"
        target.mkdir(parents=True)
        for n in range(files):
            (target / f"m{n:02}.py").write_text(f"def f_{folder}_{n}():\n    return {n}\n")
    (root / "pkg03" / "wanted.py").write_text("def needle_here():\n    return 1\n")
    (root / "pkg07" / "also.py").write_text("class NeedleHere:\n    pass\n")
    return root


def test_the_cold_search_parses_only_the_mentions_in_the_folder(tmp_path: Path) -> None:
    root = tree(tmp_path / "ws")
    index = SymbolIndex(root, tmp_path / "index.sqlite")
    found = index.search_mentions("needle", folder="pkg07/")
    assert not found.timed_out
    assert [(rel, s.name) for rel, s in found.rows] == [("pkg07/also.py", "NeedleHere")]
    assert index.parse_count == 1  # pkg03/wanted.py is outside the folder: not even read
    everywhere = index.search_mentions("needle")
    assert sorted(rel for rel, _ in everywhere.rows) == ["pkg03/wanted.py", "pkg07/also.py"]
    assert index.parse_count == 2
    index.close()


def test_a_stopped_cold_search_answers_partial(tmp_path: Path) -> None:
    root = tree(tmp_path / "ws")
    index = SymbolIndex(root, tmp_path / "index.sqlite")
    stopped = index.search_mentions("f_", timeout_seconds=1e-9)
    assert stopped.timed_out
    assert index.parse_count < 600
    index.close()


def held_batch(root: str, batch: list[tuple[str, str | None]]) -> list[FileResult]:
    """A worker task that parses nothing until the test lets it go (a file beside the tree):
    a batch as slow as a test needs."""
    while not (Path(root).parent / "release").exists():
        time.sleep(0.01)
    return index_batch(root, batch)


def test_a_cold_search_answers_at_its_limit_without_waiting_for_batches_in_flight(
    tmp_path: Path,
) -> None:
    root = tree(tmp_path / "ws")  # 600 files mention f_: the worker pool parses them
    assert PARALLEL_MIN_FILES <= 600
    index = SymbolIndex(root, tmp_path / "index.sqlite", workers=2, batch_task=held_batch)
    answers: list[ColdSearch] = []
    search = threading.Thread(
        target=lambda: answers.append(index.search_mentions("f_", timeout_seconds=1.0))
    )
    search.start()
    search.join(timeout=60)  # (a guard: without the limit, it waits for the release)
    answered_while_held = not search.is_alive()
    (tmp_path / "release").touch()
    search.join()
    index.close()
    assert answered_while_held, "the search waited for the batches it had started"
    assert answers[0].timed_out
    assert answers[0].rows == []  # nothing parsed by then


def test_the_listing_leaves_part_of_the_limit_to_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An rg that runs out of its time still leaves the search time to parse what it found."""
    root = tree(tmp_path / "ws", folders=8, files=5)  # parsed inline (no pool)
    listed = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py"))
    granted: list[tuple[float, float]] = []

    def slow_listing(
        *_: object, timeout_seconds: float, found_by: float, **__: object
    ) -> candidates.Mentions:
        granted.append((timeout_seconds, found_by))
        time.sleep(found_by)  # rg found files, and used all the time it had then
        return candidates.Mentions(listed, timed_out=True)

    monkeypatch.setattr(candidates, "files_mentioning", slow_listing)
    index = SymbolIndex(root, tmp_path / "index.sqlite")
    found = index.search_mentions("f_", timeout_seconds=2.0)
    index.close()
    assert granted == [(2.0, 2.0 * LISTING_SHARE)]
    assert found.timed_out  # the listing was cut short
    assert found.rows, "nothing was parsed after the listing"


def fake_rg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    """`rg` as a script that lists what the test says when it says (a real rg's timing
    on a tree cannot be chosen)."""
    path = tmp_path / "rg"
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755)
    monkeypatch.setattr(candidates, "find_rg", lambda: str(path))


def test_a_listing_that_found_nothing_yet_goes_on_past_its_share(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_rg(tmp_path, monkeypatch, "sleep 0.5; printf './pkg/late.py\\0'")
    found = candidates.files_mentioning(tmp_path, "late", timeout_seconds=60, found_by=0.05)
    assert found.paths == ["pkg/late.py"]  # (stopped or ended right after: either)


def test_a_listing_that_found_a_file_stops_at_its_share(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_rg(tmp_path, monkeypatch, "printf './pkg/early.py\\0'; exec sleep 600")
    answers: list[candidates.Mentions] = []
    listing = threading.Thread(
        target=lambda: answers.append(
            candidates.files_mentioning(tmp_path, "early", timeout_seconds=300, found_by=0.2)
        ),
        daemon=True,
    )
    listing.start()
    listing.join(timeout=60)  # (a guard: without the share, it waits the 300 s)
    assert answers == [candidates.Mentions(["pkg/early.py"], timed_out=True)]


async def test_the_tool_says_stopped_and_builds_after_answering(tmp_path: Path) -> None:
    root = tree(tmp_path / "ws")
    shutil.copytree(FIXTURES, root / "src")
    runtime = make_runtime(root, long_lived=True)
    service = runtime.services.get(CodeIndexService)
    args = {"action": "search", "query": "f_", "timeout_seconds": 0.000001}
    text = text_of(await call_tool(runtime, "code_index", args))
    assert text.splitlines()[-1].startswith("[stopped after 1e-06 s: partial"), text
    assert "no definition matches" not in text
    service.wait_for_build(root, timeout=120)
    assert service.index_for(root).is_complete
    warm = text_of(await call_tool(runtime, "code_index", {**args, "query": "needle_here"}))
    assert "pkg03/wanted.py:1: function needle_here" in warm
    assert "stopped after" not in warm


def test_the_background_build_runs_at_low_priority(tmp_path: Path) -> None:
    """Searches keep their speed beside a build: its thread is niced and reads the disk
    last (ionice best-effort 7); its parser processes are niced as well."""
    root = tree(tmp_path / "ws", folders=8, files=2)
    service = CodeIndexService(tmp_path / "state")
    seen: list[tuple[int, str]] = []

    def listener(_: Path, __: object) -> None:
        tid = threading.get_native_id()
        ionice = subprocess.run(["ionice", "-p", str(tid)], capture_output=True, text=True)
        seen.append((os.getpriority(os.PRIO_PROCESS, tid), ionice.stdout.strip()))

    service.build_listeners.append(listener)
    assert service.start_build(root)
    service.wait_for_build(root, timeout=120)
    service.close()
    base = os.getpriority(os.PRIO_PROCESS, 0)
    assert seen and all(nice >= base + BACKGROUND_NICENESS for nice, _ in seen)
    if shutil.which("ionice"):
        assert all(io == "best-effort: prio 7" for _, io in seen), seen
