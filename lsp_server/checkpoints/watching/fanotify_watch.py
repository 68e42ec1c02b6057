"""What changed in a root that needs more inotify watches than its share, from one fanotify
filesystem mark (fs/fanotify.py): it costs no inotify watch whatever the folder count, so
a root of 30,000 folders is watched as a small one is, and a later command's snapshot adds
only the paths that changed instead of looking at every file as git status does.

The kernel gives filesystem marks only to a process with CAP_SYS_ADMIN, and turning their
handles back into paths takes CAP_DAC_READ_SEARCH (root, or a container granting both);
elsewhere `open` says why not and the root stays unwatched (folder_stamps.py). The mark
reports every change on the root's file system, so a reader thread drains the queue as it
fills (it would overflow between commands otherwise) and keeps what lies under the root:
a path outside it or in a kept-out folder (the state folder) is dropped after a prefix
test (the kernel's folder handles resolve from a cache, fs/fanotify.py). `take` reads the
queue dry first: the kernel queues an event in the system call that made the change.

What `take` returns is what the inotify watcher returns (watcher.py): the changed paths, a
new folder as a whole, a path inside a nested repository as that repository; a full scan
when the watcher has just started, the kernel dropped events (FAN_Q_OVERFLOW), the root or
a folder above it was moved or removed, a `.gitignore` changed, or too many paths did. An
event whose folder is gone by the time it is read cannot be resolved: it happened inside a
folder removed (or moved away) since, whose removal is reported at a folder that remains,
so the snapshot adds that folder and sees everything below it gone.

Not seen: a write to a file of the root through a second hard link outside it, until a
change through the root's name shows the file has two (then it is looked at every take).
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import sys
import threading
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path

from lsp_server.checkpoints.watching.changes import MAX_PATHS, Changed, NewNames, changes_of, tell
from lsp_server.checkpoints.watching.root_budget import Tally, still_linked
from lsp_server.fs import fanotify
from lsp_server.fs.fanotify import FanotifyUnavailable, FilesystemEvents, FsEvent

log = logging.getLogger(__name__)

_NEW = fanotify.CREATE | fanotify.MOVED_TO
_GONE = fanotify.DELETE | fanotify.MOVED_FROM
_MOVED = fanotify.MOVED_FROM | fanotify.MOVED_TO
_CAP_DAC_READ_SEARCH = 2
_ELSEWHERE_KEPT = 65536
_GATHER_MS = 50
"""The reader's pause between reads: the kernel holds 16,384 events meanwhile."""
NOT_RUNNING = "the watcher was not running"


def may_resolve_handles() -> bool:
    """This process may open the kernel's file handles (CAP_DAC_READ_SEARCH)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> _CAP_DAC_READ_SEARCH & 1)
    except (OSError, ValueError):
        pass
    return False


class FanotifyWatcher:
    """A root's changes from a fanotify filesystem mark; the inotify watcher's interface."""

    watches = 0
    """inotify watches held: none."""

    def __init__(self, root: Path, kept_out: Sequence[str], why: str) -> None:
        self.root = root
        self.kept_out = tuple(kept_out)
        self.chosen = f"watched through fanotify, not inotify: {bare_reason(why)}"
        """Why, for toolhost/status and the first result."""
        self.unavailable: str | None = None
        """Why the mark could not be placed (then the root is not watched)."""
        self._lock = threading.Lock()
        self._events: FilesystemEvents | None = None
        self._wake: tuple[int, int] | None = None
        self._real = str(root)
        self._prefix = self._real + "/"
        self._dirty: set[str] = set()
        self._created: set[str] = set()
        self._repos: dict[str, bool] = {}  # folder -> holds a .git (a nested repository)
        self._hard_links: set[str] = set()
        self._elsewhere: set[bytes] = set()
        """Folders (the kernel's handles) neither in the root nor above it: their events
        are dropped before their path is looked up, until a folder moves anywhere."""
        self._rescan: str | None = NOT_RUNNING
        self._restart = False
        self._carried: set[str] = set()
        self._windows: weakref.WeakSet[NewNames] = weakref.WeakSet()

    # -- life -----------------------------------------------------------------------

    def open(self) -> bool:
        """Place the mark and start reading; False (`unavailable` says why) when this
        process may not."""
        with self._lock:
            return self._open()

    def _open(self) -> bool:
        try:
            if not may_resolve_handles():
                raise FanotifyUnavailable("fanotify's handles need CAP_DAC_READ_SEARCH")
            events = FilesystemEvents.open()
            try:
                events.watch(self.root)
                wake = os.pipe()
            except (FanotifyUnavailable, OSError):
                events.close()
                raise
            self._real = os.path.realpath(self.root)
            self._prefix = self._real.rstrip("/") + "/"
        except (FanotifyUnavailable, OSError) as exc:
            self.unavailable = f"no fanotify ({exc})"
            return False
        self._events, self._wake = events, wake
        reader = threading.Thread(
            target=self._read, args=(events, self._wake), name="fanotify-watch", daemon=True
        )
        reader.start()
        return True

    def start(self, tally: Tally) -> bool:
        """No walk (the caller measures the root itself)."""
        return False

    def _stop(self) -> None:
        self._lose("the watcher stopped")
        self._windows.clear()
        if self._wake is not None:
            with contextlib.suppress(OSError):
                os.write(self._wake[1], b"x")  # the reader closes the group as it leaves
        self._events, self._wake = None, None
        self._dirty.clear()
        self._created.clear()
        self._repos.clear()
        self._hard_links.clear()

    def close(self) -> None:
        with self._lock:
            self._stop()
            self._rescan = NOT_RUNNING

    def _read(self, events: FilesystemEvents, wake: tuple[int, int]) -> None:
        """The reader thread: keeps the queue short, so that it does not overflow."""
        both, stop = select.poll(), select.poll()  # poll: any descriptor number
        both.register(events.fileno(), select.POLLIN)
        for poller in (both, stop):
            poller.register(wake[0], select.POLLIN)
        try:
            while True:
                ready = [fd for fd, _ in both.poll()]
                if wake[0] in ready or stop.poll(_GATHER_MS):
                    return  # (else events gather a moment: one read for many)
                with self._lock:
                    if self._events is not events:
                        return
                    self._pump()
        except (OSError, ValueError):
            log.exception("reading fanotify's events failed")
            with self._lock:
                if self._events is events:
                    self._rescan = "reading fanotify's events failed"
                    self._events, self._wake = None, None
        finally:
            _close(events, wake)

    # -- reading --------------------------------------------------------------------

    def take(self) -> Changed:
        """What changed since the last take (the queue read dry first)."""
        with self._lock:
            if self._events is None and self.unavailable is None:
                self._open()
            if self._events is None:
                return Changed(frozenset(), self.unavailable or NOT_RUNNING)
            self._pump()
            return self._result()

    def feed(self, events: Iterable[FsEvent]) -> None:
        """Handle events as if read from the kernel (tests queue what the kernel queues
        rarely, such as FAN_Q_OVERFLOW)."""
        with self._lock:
            for event in events:
                self._event(event)

    def open_window(self, changes: bool = False) -> NewNames | None:
        """Collect the names made from now on (`changes`: every path changed; None: not
        watching)."""
        with self._lock:
            if self._events is None:
                return None
            self._pump()
            window = NewNames(set(), changed=set()) if changes else NewNames(self._carried)
            self._carried = self._carried if changes else set()
            self._windows.add(window)
            return window

    def changed_since(self, window: NewNames) -> frozenset[str] | None:
        """A window of changes' paths (changes.changes_of), with the files of more than one
        name (changed through another name, unheard) and the kept-out folders."""
        with self._lock:
            if self._events is None or window not in self._windows:
                return None
            self._pump()
            return changes_of(window, self._hard_links | set(self.kept_out))

    def close_window(self, window: NewNames) -> NewNames:
        with self._lock:
            if self._events is not None and window in self._windows:
                self._pump()
            if window in self._windows:
                self._windows.remove(window)
            else:
                window.lost = window.lost or "the watcher stopped"
            return window

    def carry(self, names: set[str]) -> None:
        with self._lock:
            self._carried |= names

    def invalidate(self, reason: str) -> None:
        with self._lock:
            self._rescan = self._rescan or reason

    def _lose(self, reason: str) -> None:
        for window in self._windows:
            window.lost = window.lost or reason

    def _pump(self) -> None:
        assert self._events is not None
        try:
            for event in self._events.read():
                self._event(event)
        except OSError as exc:
            self._rescan = f"reading fanotify's events failed ({exc.strerror or exc})"
            self._lose(self._rescan)

    def _result(self) -> Changed:
        paths = _outermost_only({self._outermost(path) for path in self._dirty})
        if self._rescan is None and any(p.rsplit("/", 1)[-1] == ".gitignore" for p in paths):
            self._rescan = "a .gitignore changed"
        self._hard_links = still_linked(self.root, self._hard_links, paths)
        created = frozenset(_outermost_only({self._outermost(p) for p in self._created}))
        changed = Changed(frozenset(paths | self._hard_links), self._rescan, created)
        self._dirty.clear()
        self._created.clear()
        self._rescan = None
        if self._restart:
            self._restart = False
            self._stop()
            self._open()
        return changed

    def _outermost(self, path: str) -> str:
        """A path inside a nested repository stands for the repository (its gitlink)."""
        parts = path.split("/")
        for n in range(1, len(parts)):
            folder = "/".join(parts[:n])
            repo = self._repos.get(folder)
            if repo is None:
                repo = os.path.lexists(f"{self._prefix}{folder}/.git")
                self._repos[folder] = repo
            if repo:
                return folder
        return path

    # -- events -------------------------------------------------------------------------

    def _event(self, event: FsEvent) -> None:
        if event.overflow:
            self._rescan = "the kernel dropped events (fanotify queue overflow)"
            self._lose(self._rescan)
            return
        mask = event.mask
        if event.is_folder and not mask & (_NEW | _GONE):
            return  # a folder's own mode or times: git records neither
        if event.is_folder and mask & _MOVED:
            self._elsewhere.clear()  # a folder from elsewhere may be in the root now
        key = _folder_key(event.info)
        if key in self._elsewhere:
            return
        path = self._events.path(event) if self._events is not None else ""
        if not path:
            return  # inside a folder gone since: its removal is reported where it was
        if not path.startswith(self._prefix):
            if event.is_folder and mask & _GONE and self._prefix.startswith(path + "/"):
                self._rescan = "the root or a folder above it was moved or removed"
                self._restart = True
                self._lose(self._rescan)
            elif key and not self._prefix.startswith(path.rpartition("/")[0] + "/"):
                if len(self._elsewhere) >= _ELSEWHERE_KEPT:
                    self._elsewhere.clear()
                self._elsewhere.add(key)  # nor above the root: its events are not ours
            return
        rel = path[len(self._prefix) :]
        if self._kept_out(rel):
            return
        parts = rel.split("/")
        if ".git" in parts[:-1]:
            return  # inside a repository's own folder
        tell(self._windows, rel, bool(mask & _NEW))
        if event.is_folder and mask & (_NEW | _GONE):
            self._repos.clear()  # which folders are repositories may have moved
        if parts[-1] == ".git":
            folder = rel[: -len("/.git")] if len(parts) > 1 else ""
            if folder and mask & (_NEW | _GONE):
                self._repos[folder] = bool(mask & _NEW)
                self._mark(folder, new=bool(mask & _NEW))
            return
        self._mark(rel, new=bool(mask & _NEW))

    def _mark(self, rel: str, new: bool) -> None:
        if self._rescan is not None:
            return  # a full scan comes anyway
        if len(self._dirty) >= MAX_PATHS:
            self._rescan = f"more than {MAX_PATHS} paths changed"
            self._dirty.clear()
            self._created.clear()
            return
        self._dirty.add(rel)
        if new:
            self._created.add(rel)

    def _kept_out(self, path: str) -> bool:
        return any(path == k or path.startswith(k + "/") for k in self.kept_out)


def _folder_key(info: bytes) -> bytes:
    """The file system and handle of an event's first record (struct
    fanotify_event_info_fid after its 4-byte header: fsid, handle_bytes, type, handle):
    the folder of a name, or the object itself."""
    if len(info) < 20:
        return b""
    return info[4 : 20 + int.from_bytes(info[12:16], sys.byteorder)]


def _outermost_only(paths: set[str]) -> set[str]:
    """The paths without those below another (a folder stands for everything below it)."""
    return {
        path for path in paths if not any(path[:n] in paths for n, c in enumerate(path) if c == "/")
    }


def bare_reason(why: str) -> str:
    """The inotify watcher's reason without its lead-in: what it would have taken."""
    for lead in ("the root is not watched (", "the root cannot be watched ("):
        if why.startswith(lead) and why.endswith(")"):
            return why[len(lead) : -1]
    return why


def _close(events: FilesystemEvents, wake: tuple[int, int]) -> None:
    for fd in wake:
        with contextlib.suppress(OSError):
            os.close(fd)
    with contextlib.suppress(OSError):
        events.close()
