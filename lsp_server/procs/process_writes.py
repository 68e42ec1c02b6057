"""What each command's processes changed on disk, exactly: the kernel names the writer of
every change (fs/fanotify.py) and the parent of every new process (forks.py), so a change
belongs to the command whose process tree made it, whoever else wrote meanwhile (another
session's command, toolhost's own writers, the user's editor, another toolhost process).

A command is a child process of this server (its "root": the shell, or the sandbox that
runs it) and everything descended from it, daemons included (each fork is traced to its
root when it happens, so reparenting changes nothing). The caller `expect`s a folder
before it starts commands there and `claim`s the root's pid once started; what the tree
changed under the expected folders is kept from the fork on, even before the claim, and
until the caller `unclaim`s it (once the command's checkpoint is recorded).

Both sources take privileges (CAP_SYS_ADMIN, CAP_DAC_READ_SEARCH, CAP_NET_ADMIN: root,
or a container that grants them); without them `shared()` is None and callers attribute
by origin instead (checkpoints/sharing/attribution.py). One reader thread per process.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import threading
import time
from collections import deque
from pathlib import Path

import attrs

from lsp_server.fs import fanotify
from lsp_server.fs.fanotify import FanotifyUnavailable, FilesystemEvents, FsEvent
from lsp_server.procs.forks import ForkEvents, ForksUnavailable, ProcessEvent

log = logging.getLogger(__name__)

READ_PAUSE_SECONDS = 0.05
"""The reader lets events gather this long before it reads (`written` reads at once)."""
FORGET_SECONDS = 60.0
"""An exited process's parent, and an unclaimed root's changes, are kept this long."""
_FOLDER_CHANGES = fanotify.MOVED_FROM | fanotify.MOVED_TO | fanotify.CREATE | fanotify.DELETE


@attrs.define
class Written:
    """What one command's processes changed: absolute `paths`, and `folders` they made,
    moved or removed (everything beneath those is theirs too). `complete` is False when
    the kernel dropped events meanwhile: then nobody can say."""

    paths: set[str] = attrs.Factory(set)
    folders: set[str] = attrs.Factory(set)
    complete: bool = True

    def covers(self, path: str) -> bool:
        if path in self.paths:
            return True
        return any(str(folder) in self.folders for folder in Path(path).parents)


class WriteTracker:
    def __init__(self, files: FilesystemEvents, forks: ForkEvents) -> None:
        self._files = files
        self._forks = forks
        self._me = os.getpid()
        self._lock = threading.Lock()
        self._root: dict[int, int] = {}
        """A descendant of this process -> the child of this process it descends from."""
        self._exited: dict[int, float] = {}
        self._roots: dict[int, Written] = {}
        """The changes of each root's tree (claimed or not yet)."""
        self._claims: dict[int, int] = {}
        self._claimed: deque[int] = deque()
        """Claims not yet taken in (the event loop never waits for the reader's lock)."""
        self._folders: dict[str, int] = {}
        """Expected folder (with a trailing slash) -> how many commands expect it."""
        self._watched: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="process-writes", daemon=True)
        self._thread.start()

    # -- the caller's side ---------------------------------------------------------------

    def expect(self, folder: Path) -> None:
        """Commands will run under `folder`: keep what they change there."""
        key = str(folder).rstrip("/") + "/"
        with self._lock:
            if not self._folders:
                self._forks.resume()
            if key not in self._watched:
                try:
                    self._files.watch(folder)  # FanotifyUnavailable: attribution by origin
                except Exception:
                    if not self._folders:
                        self._forks.pause()
                    raise
                self._watched.add(key)
            self._folders[key] = self._folders.get(key, 0) + 1

    def release(self, folder: Path) -> None:
        key = str(folder).rstrip("/") + "/"
        with self._lock:
            left = self._folders.get(key, 0) - 1
            if left > 0:
                self._folders[key] = left
                return
            self._folders.pop(key, None)
            if not self._folders:  # nothing runs: stop hearing of the filesystem and forks
                self._pump()  # the last command's events, before they go
                for watched in self._watched:
                    self._files.unwatch(Path(watched))
                self._watched.clear()
                self._forks.pause()

    def claim(self, pid: int) -> None:
        """`pid` (a child of this process) is a command's root: keep its tree's changes
        until `written` is asked for them. Never blocks: taken in at the next read."""
        self._claimed.append(pid)

    def _take_claims(self) -> None:
        while self._claimed:
            pid = self._claimed.popleft()
            self._claims[pid] = self._claims.get(pid, 0) + 1
            self._roots.setdefault(pid, Written())

    def written(self, pid: int) -> Written:
        """What `pid`'s tree changed so far (every event up to now read first)."""
        with self._lock:
            self._pump()
            found = self._roots.get(pid, Written())
            return attrs.evolve(found, paths=set(found.paths), folders=set(found.folders))

    def unclaim(self, pid: int) -> None:
        """`pid`'s command is recorded: its tree's changes need not be kept. Until then they
        count in `claimed_written`, so a command recorded meanwhile leaves them out."""
        with self._lock:
            self._take_claims()
            left = self._claims.get(pid, 0) - 1
            if left > 0:
                self._claims[pid] = left
            else:
                self._claims.pop(pid, None)
                self._roots.pop(pid, None)

    def claimed_written(self) -> Written:
        """What the trees of the commands still claimed changed so far (every event up to
        now read first): each such change is in its own command's checkpoint at its end."""
        with self._lock:
            self._pump()
            found = Written()
            for pid in self._claims:
                written = self._roots.get(pid, Written())
                found.paths |= written.paths
                found.folders |= written.folders
                found.complete = found.complete and written.complete
            return found

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        with self._lock:
            self._files.close()
            self._forks.close()

    # -- the reader ----------------------------------------------------------------------

    def _run(self) -> None:
        last_purge = time.monotonic()
        while not self._stop.is_set():
            try:
                sources = [self._files.fileno(), self._forks.fileno()]
                ready, _, _ = select.select(sources, [], [], 1.0)
            except (OSError, ValueError):
                return  # closed
            if ready:
                self._stop.wait(READ_PAUSE_SECONDS)  # a batch per read, not an event
            with self._lock:
                try:
                    if ready:
                        self._pump()
                    if time.monotonic() - last_purge > FORGET_SECONDS / 4:
                        self._purge()
                        last_purge = time.monotonic()
                except OSError:
                    log.exception("reading the kernel's change events failed")

    def _pump(self) -> None:
        """Forks, then changes, then forks again: a change read here was made by a process
        whose fork is queued by then."""
        self._take_claims()
        self._note_processes(self._forks.read())
        changes = self._files.read()
        self._note_processes(self._forks.read())
        for event in changes:
            self._note_change(event)

    def _note_processes(self, events: list[ProcessEvent]) -> None:
        for event in events:
            if event.lost:
                self._lose("the kernel dropped process events")
            elif event.exited:
                if event.pid in self._root:
                    self._exited[event.pid] = time.monotonic()
            elif event.parent == self._me:
                self._root[event.pid] = event.pid
                self._exited.pop(event.pid, None)
                if self._folders:
                    self._roots.setdefault(event.pid, Written())
            elif (root := self._root.get(event.parent)) is not None:
                self._root[event.pid] = root
                self._exited.pop(event.pid, None)
            else:
                self._root.pop(event.pid, None)  # a reused pid, not ours now

    def _note_change(self, event: FsEvent) -> None:
        if event.overflow:
            self._lose("the kernel's change queue overflowed")
            return
        root = self._root.get(event.pid)
        if root is None or root not in self._roots:
            return
        path = self._files.path(event)
        if not path or not any(path.startswith(f) or path + "/" == f for f in self._folders):
            return
        written = self._roots[root]
        if event.is_folder and event.mask & _FOLDER_CHANGES:
            written.folders.add(path)
        else:
            written.paths.add(path)

    def _lose(self, why: str) -> None:
        log.warning("exact attribution of this moment's changes is lost: %s", why)
        for written in self._roots.values():
            written.complete = False

    def _purge(self) -> None:
        self._take_claims()
        old = time.monotonic() - FORGET_SECONDS
        for pid, when in list(self._exited.items()):
            if when < old:
                del self._exited[pid]
                self._root.pop(pid, None)
                if pid not in self._claims:
                    self._roots.pop(pid, None)


_shared: WriteTracker | None = None
_unavailable: str | None = None
_shared_lock = threading.Lock()


def shared() -> WriteTracker | None:
    """This process's tracker, started at the first call; None where the kernel will not
    say who writes (`unavailable()` says why)."""
    global _shared, _unavailable
    with _shared_lock:
        if _shared is None and _unavailable is None:
            files = None
            try:
                files = FilesystemEvents.open()
                forks = ForkEvents.open()
            except (FanotifyUnavailable, ForksUnavailable) as exc:
                if files is not None:
                    files.close()
                _unavailable = str(exc)
            else:
                forks.pause()  # until a command expects a folder
                _shared = WriteTracker(files, forks)
        return _shared


def unavailable() -> str | None:
    return _unavailable


def reset_for_tests() -> None:
    global _shared, _unavailable
    with _shared_lock:
        if _shared is not None:
            with contextlib.suppress(OSError):
                _shared.close()
        _shared, _unavailable = None, None
