"""Many fanotify folder marks placed by a child process, on the server's own group.

A first watch from a git index marks every folder the index names (27,067 in a
200,000-file repository): six system calls a folder, each giving up and taking back the
GIL. At the server's start the runtime's imports hold that GIL, and the marks took 1.2 s
where they take 0.6 s alone. So past CHILD_FROM folders they are placed by
`python -m lsp_server.fs.folder_marker`, which gets the group's descriptor (fanotify marks
belong to the group, not to the process that placed them) and the paths on stdin, makes
the same calls as FanotifyFolders.place, and answers a record a path; the server only
gives each its wd. A child that cannot start, or ends early, leaves the rest to the server.
"""

from __future__ import annotations

import errno
import os
import struct
import subprocess
import sys
from collections.abc import Generator, Iterator, Sequence

from lsp_server.fs.fanotify_folders import FanotifyFolders
from lsp_server.fs.inotify import InotifyError

CHILD_FROM = 4000
"""Fewer folders are marked in-process (the child's start costs about 0.1 s)."""
_RECORD = struct.Struct("=iq?H")  # errno (0: marked), change time, probe found, key length

Placed = tuple[int, bool, int] | InotifyError  # (wd, probe found, change time) or why not


def add_watches_probing(
    marks: FanotifyFolders, paths: Sequence[str], probe: str
) -> Generator[Placed, None, None]:
    """`marks.add_watch_probing(path, probe)` of each path in turn, or the InotifyError it
    would raise (the caller decides whether to go on)."""
    done = 0
    if len(paths) >= CHILD_FROM:
        for placed in _from_child(marks, paths, probe):
            done += 1
            yield placed
    for path in paths[done:]:
        try:
            yield marks.add_watch_probing(path, probe)
        except InotifyError as exc:
            yield exc


def _from_child(marks: FanotifyFolders, paths: Sequence[str], probe: str) -> Iterator[Placed]:
    """What the child placed, path by path, until it ends (all of them, unless it failed)."""
    command = [sys.executable, "-I", "-m", __name__, str(marks.fd), probe]
    try:
        child = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            pass_fds=(marks.fd,),
            cwd="/",  # (-I: neither the workspace nor PYTHONPATH can stand in for this module)
        )
    except OSError:
        return
    assert child.stdin is not None and child.stdout is not None
    try:
        with child.stdin:
            child.stdin.write(b"\0".join(map(os.fsencode, paths)))
        read = child.stdout.read
        for path in paths:
            head = read(_RECORD.size)
            if len(head) < _RECORD.size:
                return
            code, changed, found, size = _RECORD.unpack(head)
            key = read(size)
            if len(key) < size:
                return
            if code:
                yield InotifyError(code, f"fanotify cannot watch {path}: {os.strerror(code)}")
            else:
                yield marks.adopt(path, key), found, changed
    except OSError:
        return
    finally:
        child.stdout.close()
        child.kill()
        child.wait()


def main(argv: Sequence[str]) -> int:
    """The child: mark each path of stdin on the group `argv[1]`, a record each on stdout."""
    marks = FanotifyFolders(int(argv[1]))
    probe = argv[2]
    listed = sys.stdin.buffer.read()
    out = sys.stdout.buffer
    for path in listed.split(b"\0") if listed else []:
        try:
            key, found, changed = marks.place(os.fsdecode(path), probe)
        except InotifyError as exc:
            out.write(_RECORD.pack(exc.errno or errno.EIO, 0, False, 0))
            continue
        out.write(_RECORD.pack(0, changed, found, len(key)) + key)
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
