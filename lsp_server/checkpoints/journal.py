"""The writers' journal: a writer's checkpoint as it leaves the call, before the shadow
repository has it (blocking; the recorder calls it in worker threads).

One append per write, no fsync: a header line, the record as JSON, then the exact bytes of
every file state it names (before and after). The file is the server's own while it lives:
`<pid>-<token>-<n>.log` under `<root's checkpoint folder>/journal/`, flock'ed from open to
close. A batch rotates to a fresh file, writes the closed one's entries into the shadow
repository and deletes it. Whatever a dead process left behind (its file is no longer
locked) is replayed by the next process that opens the root's checkpoints: what it had
already written into the repository is recognised by call id and end time and not written
twice; a torn last entry (the machine, not the process, died mid-append) is ignored.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import cattrs

from lsp_server.checkpoints.records import Checkpoint, FileRecord, Reads

MAGIC = b"toolhost-journal-1"
_CONVERTER = cattrs.Converter()


@attrs.frozen
class JournalEntry:
    """One writer's checkpoint: the record and the bytes of the states it names."""

    call_id: str
    session: str
    tool: str
    started: float
    ended: float
    files: tuple[FileRecord, ...]
    reads: Reads
    reverts: str | None
    blobs: dict[str, bytes]
    """oid -> the exact bytes (a file, a symlink's target, or a large file's pointer)."""
    pointers: frozenset[str] = frozenset()
    """The oids in `blobs` that stand for files over the size limit."""
    agent: str | None = None

    @property
    def key(self) -> tuple[str, float]:
        return (self.call_id, self.ended)

    def checkpoint(self) -> Checkpoint:
        """The record alone, unnumbered (attribution reads it before the queue records it)."""
        return Checkpoint(
            0,
            self.call_id,
            self.session,
            self.tool,
            self.started,
            self.ended,
            self.files,
            self.reads,
            reverts=self.reverts,
            agent=self.agent,
        )


def encode(entry: JournalEntry) -> bytes:
    oids = list(entry.blobs)
    header = json.dumps(
        {
            "call_id": entry.call_id,
            "session": entry.session,
            "tool": entry.tool,
            "started": entry.started,
            "ended": entry.ended,
            "reads": entry.reads,
            "reverts": entry.reverts,
            "agent": entry.agent,
            "files": _CONVERTER.unstructure(entry.files),
            "blobs": [[oid, len(entry.blobs[oid]), oid in entry.pointers] for oid in oids],
        }
    ).encode()
    body = b"".join(entry.blobs[oid] for oid in oids)
    return b"%s %d %d\n" % (MAGIC, len(header), len(body)) + header + body


def decode_all(data: bytes) -> list[JournalEntry]:
    """Every whole entry of a journal, in order (a torn or unreadable tail is dropped)."""
    entries: list[JournalEntry] = []
    offset = 0
    while offset < len(data):
        end = data.find(b"\n", offset)
        if end < 0:
            break
        try:
            magic, header_size, body_size = data[offset:end].split(b" ")
            if magic != MAGIC:
                break
            start = end + 1
            header_end = start + int(header_size)
            body_end = header_end + int(body_size)
            if body_end > len(data):
                break
            entries.append(_entry(json.loads(data[start:header_end]), data[header_end:body_end]))
        except (ValueError, KeyError, TypeError, cattrs.BaseValidationError):
            break
        offset = body_end
    return entries


def _entry(header: dict[str, Any], body: bytes) -> JournalEntry:
    blobs: dict[str, bytes] = {}
    pointers: set[str] = set()
    at = 0
    for oid, size, is_pointer in header["blobs"]:
        blobs[oid] = body[at : at + size]
        at += size
        if is_pointer:
            pointers.add(oid)
    return JournalEntry(
        call_id=header["call_id"],
        session=header["session"],
        tool=header["tool"],
        started=header["started"],
        ended=header["ended"],
        files=_CONVERTER.structure(header["files"], tuple[FileRecord, ...]),
        reads=header["reads"],
        reverts=header["reverts"],
        blobs=blobs,
        pointers=frozenset(pointers),
        agent=header.get("agent"),
    )


class ClosedJournal:
    """A journal no longer appended to, still locked until its entries are in the shadow
    repository (`remove`) or left for the next start to replay (`release`)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd = fd

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)
        self.release()

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # closing drops the flock
            self._fd = -1


class JournalFile:
    """This process's journal of one root (not thread-safe: the recorder holds its lock)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder / "journal"
        self._token = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._count = 0
        self._fd = -1
        self._path: Path | None = None

    def append(self, data: bytes) -> None:
        if self._fd < 0:
            self._open()
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def _open(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._count += 1
        path = self.folder / f"{self._token}-{self._count}.log"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        self._fd, self._path = fd, path

    def rotate(self) -> ClosedJournal | None:
        """Close the current file (appends go to a new one); None when none is open."""
        if self._fd < 0 or self._path is None:
            return None
        closed = ClosedJournal(self._path, self._fd)
        self._fd, self._path = -1, None
        return closed

    def owns(self, path: Path) -> bool:
        return path.name.startswith(self._token + "-")


@contextlib.contextmanager
def leftover(path: Path) -> Iterator[ClosedJournal | None]:
    """A journal no live process holds, locked for replay; None when one holds it or it is
    gone. The caller removes it once replayed (else it is released as it was)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        yield None
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        yield None
        return
    if not path.exists():  # replayed and removed between the open and the lock
        os.close(fd)
        yield None
        return
    closed = ClosedJournal(path, fd)
    try:
        yield closed
    finally:
        closed.release()


def journal_files(folder: Path) -> list[Path]:
    """The journals under a root's checkpoint folder, oldest first."""
    try:
        found = [p for p in (folder / "journal").iterdir() if p.suffix == ".log"]
    except OSError:
        return []

    def age(path: Path) -> tuple[int, str]:
        with contextlib.suppress(OSError):
            return (path.stat().st_mtime_ns, path.name)
        return (0, path.name)

    return sorted(found, key=age)


def pending(folder: Path) -> list[Checkpoint]:
    """The writers' changes journaled under a store's `folder` by any toolhost process and
    not recorded yet (write_queue.py records them in batches), as checkpoints (seq 0)."""
    found: list[Checkpoint] = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder / "journal"):
            if entry.name.endswith(".log"):
                with contextlib.suppress(OSError):
                    found += [e.checkpoint() for e in decode_all(Path(entry.path).read_bytes())]
    return found
