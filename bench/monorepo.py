"""toolhost in a monorepo (issue 43's table): every row beside its reference, same run.

Builds a git repository of --files text files (200,000 by default) from what is installed
here: the Python standard library, the venv's site-packages, Go's sources
(/usr/share/go-*/src) and the node_modules of .tools/*, copied as many times as it takes,
renamed so nothing in them is ignored (node_modules -> node_mods, a leading dot ->
"dot_"), committed; and a plain folder (no git) of --plain-files of them. One `toolhost
mcp` per folder over stdio, driven by a raw client (bench/rawrpc.py: one JSON line per
message), policy mode bypass, state and config folders of its own. The tree is read
before each row and each pair of its runs (rg over every file, git status): each meets a
warm page cache on both sides, as in a repository one works in (this machine's page
cache does not keep a 2 GB tree for minutes, and a cold read of it costs 10-20 s, paid by
whichever side reads first). Then, in order:

- the first and second writing commands (`bash` `echo x >> f`) vs `git status`, grep
  right after the first command's snapshot vs `rg -n`, and the server's first `glob
  **/*.go` (which stats every match) vs `rg --files -g '*.go'`: a first needs a fresh
  server, so --runs servers are started in turn, each with a state folder of its own;
- later writing commands (of the last of them) vs `git status`;
- `glob **/*.go` again (the mtimes it keeps while the checkpoint watcher runs);
- `grep "def urlopen"` and a pattern that matches nothing, vs `rg -n` with the same;
- `code_index search` before the index exists (three names) vs `rg -l -w NAME` plus the
  parse of the files the search reads (tree-sitter, timed here in one process);
- grep while the index builds in the background, vs `rg -n`;
- the plain folder's first writing command vs `find . -type f` (--runs fresh servers);
- the server's peak RSS; its inotify watches vs fs.inotify.max_user_watches, and its
  fanotify folder marks.

Medians of --runs (references too). The load average is printed with the table: the
machine is shared, and the ratios, not the seconds, are what compares across runs.

    .venv/bin/python bench/monorepo.py [--files 200000] [--plain-files 50000] [--runs 3]
        [--tree DIR] [--keep] [--only-search] [--as-user]

--tree builds in (or reuses) DIR instead of a temporary folder; --keep leaves it there.
--only-search takes the search rows alone (their runs in turn with their references).
--as-user runs the servers as a user's run (as root: with every capability dropped), so
without a fanotify filesystem mark: a root too big for the inotify share is then watched
by fanotify folder marks (Linux 5.13+).
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.rawrpc import RawClient
from lsp_server.codeintel.candidates import files_mentioning
from lsp_server.codeintel.parsing import index_batch
from lsp_server.search.ripgrep import find_ripgrep

HERE = Path(__file__).resolve().parents[1]
INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "bench-monorepo", "version": "1"},
}
NAMES = ("urlopen", "getaddrinfo", "ParseResult")
NO_MATCH = "zq_no_such_text_xj"
GLOB_FIRST = "`glob **/*.go`, first"
MAX_BYTES = 512 * 1024


def sources() -> list[Path]:
    found = [Path("/usr/lib/python3.11"), Path(sysconfig.get_paths()["purelib"])]
    found += [Path(p) for p in sorted(glob.glob("/usr/share/go-*/src"))]
    found += sorted(HERE.glob(".tools/*/node_modules"))
    return [path for path in found if path.is_dir()]


def renamed(part: str) -> str:
    if part == "node_modules":
        return "node_mods"
    return "dot_" + part[1:] if part.startswith(".") else part


def text_files(source: Path) -> Iterator[tuple[Path, str]]:
    """(file, its path below the copy) for each small text file, in a stable order."""
    for folder, dirs, files in os.walk(source):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        rel = Path(folder).relative_to(source)
        for name in sorted(files):
            path = Path(folder, name)
            try:
                if path.is_symlink() or path.stat().st_size > MAX_BYTES:
                    continue
                with path.open("rb") as handle:
                    if b"\0" in handle.read(4096):
                        continue
            except OSError:
                continue
            yield path, "/".join(renamed(p) for p in (*rel.parts, name))


def fill(root: Path, count: int) -> int:
    """Copies of the sources under root/copyN/<source name>/ until `count` files."""
    made = 0
    for copy in range(1000):
        before = made
        for source in sources():
            label = "_".join(renamed(p) for p in source.parts[-3:])
            for path, rel in text_files(source):
                if made >= count:
                    return made
                target = root / f"copy{copy}" / label / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
                made += 1
        if made == before:
            break
    return made


def build(tree: Path, files: int, plain_files: int) -> tuple[Path, Path]:
    repo, plain = tree / "repo", tree / "plain"
    if not (repo / ".git").is_dir():
        started = time.perf_counter()
        made = fill(repo, files)
        git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
        subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
        subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
        subprocess.run([*git, "commit", "-qm", "tree"], cwd=repo, check=True)
        print(f"built {made} files in git in {time.perf_counter() - started:.0f} s", flush=True)
    if not plain.is_dir():
        made = fill(plain, plain_files)
        print(f"built {made} files in a plain folder", flush=True)
    return repo, plain


def timed(action: Callable[[], Any]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def run(command: list[str], cwd: Path) -> None:
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# A user's server, as root: root's files stay readable, but no capability is held (no
# fanotify filesystem mark, no CAP_DAC_READ_SEARCH), now or after exec.
AS_USER = [
    "setpriv",
    "--inh-caps=-all",
    "--bounding-set=-all",
    "--securebits=+noroot,+noroot_locked,+no_setuid_fixup",
]


class Server:
    as_user = False
    """Run without privileges (--as-user)."""

    def __init__(self, root: Path, home: Path) -> None:
        self.root = root
        config = home / "config" / "toolhost"
        config.mkdir(parents=True, exist_ok=True)
        (config / "config.toml").write_text('[policy]\nmode = "bypass"\n')
        env = {
            **os.environ,
            "TOOLHOST_STATE_DIR": str(home / "state"),
            "XDG_CONFIG_HOME": str(home / "config"),
        }
        script = Path(sys.executable).with_name("toolhost")
        entry = [str(script)] if script.exists() else [sys.executable, "-m", "lsp_server.cli"]
        command = [*entry, "mcp", "--root", str(root), "--attach", "never"]
        if self.as_user and os.geteuid() == 0:
            command = [*AS_USER, *command]
        self.client = RawClient(
            command, framing="line", cwd=root, env=env, stderr=subprocess.DEVNULL
        )
        self.client.request("initialize", INITIALIZE)
        self.client.notify("notifications/initialized", {})
        self.client.request("tools/list", {})

    def warm(self) -> None:
        """One read first: the rows time calls, not the runtime's start."""
        some = next(self.root.rglob("*.py")).relative_to(self.root).as_posix()
        self.call("read_file", {"path": some, "limit": 1})

    def call(self, name: str, arguments: dict[str, Any]) -> str:
        result = self.client.request("tools/call", {"name": name, "arguments": arguments})
        text = "\n".join(part.get("text", "") for part in result.get("content", []))
        if result.get("isError"):
            raise SystemExit(f"{name} {arguments} failed: {text[:500]}")
        return text

    def timed_call(self, name: str, arguments: dict[str, Any]) -> float:
        return timed(lambda: self.call(name, arguments))

    def pids(self) -> list[int]:
        """The server and its descendants."""
        found, queue = [], [self.client.process.pid]
        while queue:
            pid = queue.pop()
            found.append(pid)
            for children in glob.glob(f"/proc/{pid}/task/*/children"):
                with contextlib.suppress(OSError):
                    queue += [int(c) for c in Path(children).read_text().split()]
        return found

    def peak_rss_mb(self) -> float:
        status = Path(f"/proc/{self.client.process.pid}/status").read_text()
        line = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
        return int(line.split()[1]) / 1024

    def inotify_watches(self, kind: str = "inotify wd:") -> int:
        """Watches held, as the kernel lists them (`kind` "fanotify ino:": folder marks)."""
        count = 0
        for pid in self.pids():
            for fdinfo in glob.glob(f"/proc/{pid}/fdinfo/*"):
                with contextlib.suppress(OSError):
                    count += Path(fdinfo).read_text().count(kind)
        return count

    def close(self) -> None:
        self.client.close()


class Table:
    def __init__(self) -> None:
        self.rows: list[str] = []

    def add(self, step: str, ours: list[float], reference: str, theirs: list[float]) -> None:
        mine, ref = statistics.median(ours), statistics.median(theirs)
        spread = f" ({min(ours):.2f}-{max(ours):.2f})" if len(ours) > 1 else ""
        self.rows.append(
            f"| {step} | {mine:.2f} s{spread} | {reference} {ref:.2f} s | {mine / ref:.2f}x |"
        )
        print(self.rows[-1], flush=True)

    def note(self, step: str, ours: str, reference: str, ratio: str = "") -> None:
        self.rows.append(f"| {step} | {ours} | {reference} | {ratio} |")
        print(self.rows[-1], flush=True)


def parse_seconds(root: Path, name: str) -> tuple[float, int]:
    """The parse of the files a cold search of `name` reads, in this process."""
    paths = files_mentioning(root, name).paths
    batch: list[tuple[str, str | None]] = [(rel, None) for rel in paths]
    return timed(lambda: index_batch(str(root), batch)), len(paths)


def paired(
    ours: Callable[[], float],
    reference: Callable[[], float],
    runs: int,
    warm: Callable[[], None] = lambda: None,
) -> tuple[list[float], list[float]]:
    """`runs` of each, taken in turn (ours, the reference, ours ...): on a shared machine
    both sides of a search row see the same moments' load; `warm` before each pair."""
    pairs = []
    for _ in range(runs):
        warm()
        pairs.append((ours(), reference()))
    return [mine for mine, _ in pairs], [theirs for _, theirs in pairs]


def measure(
    repo: Path, plain: Path, home: Path, runs: int, table: Table, only_search: bool = False
) -> None:
    rg = str(find_ripgrep() or shutil.which("rg") or "rg")
    status = ["git", "status", "--porcelain"]

    def warm(folder: Path = repo) -> None:
        """The tree read as a repository one works in is (every file, and its folders
        listed): else the first side to read it pays the disk for both."""
        run([rg, "-c", NO_MATCH], folder)
        if folder == repo:
            run(status, repo)

    server: Server | None = None

    def grep_rows(step: str, pattern: str) -> None:
        assert server is not None
        ours, theirs = paired(
            partial(server.timed_call, "grep", {"pattern": pattern}),
            partial(timed, partial(run, [rg, "-n", pattern], repo)),
            runs,
            warm,
        )
        table.add(step, ours, "`rg -n`", theirs)

    write = {"command": "echo x >> bench_writes.txt"}
    glob_args = {"pattern": "**/*.go"}
    list_go = partial(run, [rg, "--files", "-g", "*.go"], repo)
    rows: dict[str, tuple[list[float], list[float]]] = {}

    def sample(step: str, ours: float, reference: Callable[[], None]) -> None:
        mine, theirs = rows.setdefault(step, ([], []))
        mine.append(ours)
        theirs.append(timed(reference))

    try:
        # A first command needs a server of its own: `runs` of them, each started afresh
        # (its own state folder) on the tree as it was, the file the command writes gone.
        for attempt in range(runs):
            (repo / "bench_writes.txt").unlink(missing_ok=True)
            if server is not None:
                server.close()
            warm()
            server = Server(repo, home / f"repo-{attempt}")
            server.warm()
            first = server.timed_call("bash", write)
            if not only_search:
                sample("first writing command", first, partial(run, status, repo))
            grep = server.timed_call("grep", {"pattern": "def urlopen"})
            after = partial(run, [rg, "-n", "def urlopen"], repo)
            sample("grep right after the first snapshot", grep, after)
            if not only_search:
                second = server.timed_call("bash", write)
                sample("second writing command", second, partial(run, status, repo))
            # The server's first glob stats every match (no mtimes kept yet).
            sample(GLOB_FIRST, server.timed_call("glob", glob_args), list_go)
        assert server is not None
        for step in ("first writing command", "second writing command"):
            if step in rows:
                mine, theirs = rows[step]
                table.add(step, mine, "`git status`", theirs)
        if not only_search:
            warm()
            later = [server.timed_call("bash", write) for _ in range(max(runs, 3))]
            refs = [timed(lambda: run(status, repo)) for _ in range(max(runs, 3))]
            table.add("later writing commands", later, "`git status`", refs)
        grep_after, rg_after = rows["grep right after the first snapshot"]
        table.add("grep right after the first snapshot", grep_after, "`rg -n`", rg_after)
        globs, listings = rows[GLOB_FIRST]
        table.add(GLOB_FIRST, globs, "`rg --files -g '*.go'`", listings)
        globs, listings = paired(
            partial(server.timed_call, "glob", glob_args), partial(timed, list_go), runs, warm
        )
        table.add("`glob **/*.go`, again", globs, "`rg --files -g '*.go'`", listings)
        for label, pattern in (("match", "def urlopen"), ("no match", NO_MATCH)):
            grep_rows(f"`grep` ({label})", pattern)
        if only_search:  # the first search starts the index's background build
            server.call("code_index", {"action": "search", "query": NAMES[0]})
        for name in () if only_search else NAMES:
            warm()
            ours = server.timed_call("code_index", {"action": "search", "query": name})
            words = timed(partial(run, [rg, "-l", "-w", name], repo))
            parse, count = parse_seconds(repo, name)
            table.add(
                f"`code_index search {name}` before the index",
                [ours],
                f"`rg -l -w` + parse of {count} files",
                [words + parse],
            )
        grep_rows("`grep` while the index builds", "def urlopen")
        if only_search:
            return
        table.note("server peak RSS", f"{server.peak_rss_mb():.0f} MB", "300 MB (target)")
        watches = server.inotify_watches()
        limit = int(Path("/proc/sys/fs/inotify/max_user_watches").read_text())
        table.note(
            "inotify watches held", str(watches), f"max_user_watches {limit}",
            f"{100 * watches / limit:.1f} %",
        )  # fmt: skip
        marks = server.inotify_watches("fanotify ino:")
        table.note("fanotify folder marks held", str(marks), "(a pool editors do not use)")
    finally:
        if server is not None:
            server.close()
    firsts, finds = [], []
    for attempt in range(runs):
        (plain / "bench_writes.txt").unlink(missing_ok=True)
        warm(plain)
        server = Server(plain, home / f"plain-{attempt}")
        try:
            server.warm()
            firsts.append(server.timed_call("bash", write))
            finds.append(timed(lambda: run(["find", ".", "-type", "f"], plain)))
        finally:
            server.close()
    table.add("non-git folder, first writing command", firsts, "`find . -type f`", finds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=200_000)
    parser.add_argument("--plain-files", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tree", type=Path)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument(
        "--as-user", action="store_true",
        help="run the servers without privileges (as root: every capability dropped), as "
        "a user's are: no fanotify filesystem mark",
    )  # fmt: skip
    parser.add_argument(
        "--only-search", action="store_true",
        help="only the search rows (glob; grep after the first snapshot, with and without "
        "matches, while the index builds)",
    )  # fmt: skip
    args = parser.parse_args()
    Server.as_user = args.as_user
    tree = args.tree or Path(tempfile.mkdtemp(prefix="toolhost-monorepo-"))
    tree.mkdir(parents=True, exist_ok=True)
    try:
        repo, plain = build(tree, args.files, args.plain_files)
        home = Path(tempfile.mkdtemp(prefix="toolhost-monorepo-home-"))
        try:
            table = Table()
            print("| step | toolhost | reference | ratio |\n| --- | --- | --- | --- |", flush=True)
            measure(repo, plain, home, args.runs, table, args.only_search)
            load = " ".join(f"{v:.2f}" for v in os.getloadavg())
            print(f"\n{args.files} files, {os.cpu_count()} cores, load average {load}", flush=True)
        finally:
            remove(home)
    finally:
        if not args.keep:
            remove(tree)


def remove(folder: Path) -> None:
    """rm -rf, again while something the servers started still writes there (a killed
    server's git child can outlive it by a moment)."""
    for _ in range(20):
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            return
        time.sleep(0.5)
    print(f"could not remove {folder}", file=sys.stderr)


if __name__ == "__main__":
    main()
