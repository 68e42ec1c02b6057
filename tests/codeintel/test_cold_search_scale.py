"""code_index search before the index exists costs what the name's files cost, not what
the tree holds: only the searched folder is scanned, only the files that mention the name
are parsed, the full build starts after the answer, and a search stopped by its time
limit says so instead of "no definition matches"."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from pathlib import Path

from lsp_server.codeintel.index import SymbolIndex
from lsp_server.codeintel.indexes import BACKGROUND_NICENESS, CodeIndexService
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
