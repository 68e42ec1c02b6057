"""The hard-linked files among many (a watcher's first walk, root_budget.py's
`links_among`), looked at by GNU `stat` in a child process rather than by a Python loop.

An lstat each is most of the cost (2.5 us: 0.5 s on 200,000 files), but the loop around it
held the interpreter's lock about a fifth of the time, and at idle priority a thread can be
descheduled holding it: a search right after a repository's first snapshot then waited
for a thread that only runs on an idle core. The child holds no such lock and inherits
the calling thread's idle priority (CPU and I/O); the names go to it through a temporary
file and its answer is read 64 KiB at a time, so that no step here holds the lock for
long either."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from lsp_server.procs.search_path import outside_path

# Each record: the link count, a space, the name as given, a NUL (no name holds a NUL).
_COMMAND = ["xargs", "-0", "-r", "stat", "--printf=%h %n\\0", "--"]
_NAMES_AT_ONCE = 10_000
_READ_BYTES = 1 << 16


def linked_apart(root: str, files: Sequence[str]) -> set[str] | None:
    """The files (relative to `root`) with more than one hard link; None when the child
    could not give them (no GNU stat or xargs: the caller looks in-process). A file gone
    meanwhile is left out."""
    found: set[str] = set()
    with tempfile.TemporaryFile() as names:
        for start in range(0, len(files), _NAMES_AT_ONCE):
            part = files[start : start + _NAMES_AT_ONCE]
            names.write("\0".join(part).encode("utf-8", "surrogateescape") + b"\0")
        names.seek(0)
        try:
            child = subprocess.Popen(
                _COMMAND,
                stdin=names,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=root,
                # (xargs and stat from the system, never a file of the workspace by those names)
                env={"PATH": outside_path(Path(os.path.realpath(root)), None), "LC_ALL": "C"},
            )
        except OSError:
            return None
    assert child.stdout is not None
    with child:
        rest = b""
        read_any = False
        while chunk := os.read(child.stdout.fileno(), _READ_BYTES):
            read_any = True
            records = (rest + chunk).split(b"\0")
            rest = records.pop()
            _note(records, found)
    # 123: some stat failed (a file gone); anything else but 0 means the tools failed.
    if child.returncode not in (0, 123) or (child.returncode and not read_any):
        return None
    return found


def _note(records: list[bytes], found: set[str]) -> None:
    # (most files have one link: those records are passed over in bulk)
    for record in [r for r in records if not r.startswith(b"1 ")]:
        count, _, name = record.partition(b" ")
        if count.isdigit() and int(count) > 1:
            found.add(name.decode("utf-8", "surrogateescape"))
