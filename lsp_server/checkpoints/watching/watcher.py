"""What changed in a workspace root since the last snapshot, from inotify (or fanotify
folder marks, the same events from a pool of their own: `marks`), so that a shell
command's checkpoint adds only those paths instead of scanning the whole tree twice.

Every folder of the root on its file system is watched, except `.git` folders, the inside
of nested repositories (git records neither), toolhost's own folders and `/proc`, `/sys`,
`/dev`, within the process's share of watches (root_budget.py); the first walk also
measures the root. `take` reads the queue dry when a snapshot is about to be taken: the
kernel queues an event in the system call that makes the change, so once a command has
ended every change it made through a watched folder is in the queue. A folder created
(or moved in) is marked changed as a whole and watched at once: `git add -A -- folder`
covers files made before its watch existed.

A git root can be watched from its index instead of by a first walk (`start_known`: the
folders it names, unlisted), completed by the first snapshot seeded from that index
(`complete_known`, `complete_untracked`: shadow/scans.py), after which no scan is asked for.

`take` asks for a full scan instead (Changed.rescan says why; docs/CHECKPOINTS.md lists
when): the watcher is starting (its first walk, which nothing waits for, or only the
index's folders are watched yet) or just started,
or could not; the kernel dropped events; the root went; a `.gitignore` changed; more than
MAX_PATHS paths changed; the last snapshot failed (`invalidate`). A walk that runs out of
its share of inotify watches goes on with fanotify folder marks (`spill`: a pool of their
own) where the process has no filesystem mark (root_watchers.py), instead of walking again.

Files with more than one hard link are looked at on every take: a write through a name
outside the root reaches no watched folder (docs/CHECKPOINTS.md says what no watcher sees).
A command can also ask which names were made while it ran (`open_window`/`close_window`):
every new name the events report from then on, whoever reads the queue (the sandbox looks
there for files that make other programs run code, tools/shell/protected_made.py).
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable, Collection, Container, Iterable, Sequence
from pathlib import Path

from lsp_server.checkpoints.watching.changes import (
    MAX_PATHS,
    Changed,
    NewNames,
    changes_of,
    outermost,
    tell,
)
from lsp_server.checkpoints.watching.root_budget import (
    Tally,
    WatchBudget,
    links_among,
    still_linked,
)
from lsp_server.checkpoints.watching.tree_walk import TreeWalk
from lsp_server.fs import inotify
from lsp_server.fs.inotify import Event, InotifyError
from lsp_server.fs.shared_listings import SharedListings

log = logging.getLogger(__name__)

_NEW = inotify.IN_CREATE | inotify.IN_MOVED_TO
_GONE = inotify.IN_DELETE | inotify.IN_MOVED_FROM
_ROOT_GONE = inotify.IN_DELETE_SELF | inotify.IN_MOVE_SELF | inotify.IN_UNMOUNT
_SKIPPED_FOLDER = (2, 13, 20, 40)  # ENOENT, EACCES, ENOTDIR, ELOOP
STARTING = "the watcher was starting"
STILL_STARTING = "the watcher is still starting (its first walk)"
FROM_INDEX = "the watcher is starting (the folders of the repository's index are watched)"


class TreeWatcher(TreeWalk):
    def __init__(
        self,
        root: Path,
        kept_out: Sequence[str] = (),
        budget: WatchBudget | None = None,
        skip: frozenset[str] = frozenset(),
        marks: bool = False,
        listings: SharedListings | None = None,
    ) -> None:
        super().__init__(root, kept_out, budget, skip, marks, listings)
        self._walk = threading.Lock()  # held by `start`'s walk (never waited for)
        self._dirty: set[str] = set()
        self._created: set[str] = set()
        self._rescan: str | None = "the watcher was not running"
        self._restart = False
        self._carried: set[str] = set()  # new names a window's reader could not look into
        self._windows: weakref.WeakSet[NewNames] = weakref.WeakSet()  # (a dropped one goes)
        self._partial = False  # `start_known` watched the index's folders alone (so far)
        self._linked_later: list[str] = []  # (the index's files, for `complete_untracked`)

    @property
    def watches(self) -> int:  # inotify watches held now
        return 0 if self.marks else len(self._folders)

    @property
    def folder_marks(self) -> int:
        return len(self._folders) if self.marks else 0

    @property
    def starting(self) -> bool:  # `start`'s walk is under way, or the root is watched in part
        return self._walk.locked() or self._partial

    @property
    def partial(self) -> bool:  # started from an index (`start_known`), not whole yet
        return self._partial

    @property
    def walking(self) -> bool:  # `start`'s walk or `start_known`'s watches are under way
        return self._walk.locked()

    # -- life -----------------------------------------------------------------------

    def start(self, tally: Tally | None, gate: threading.Event | None = None) -> bool:
        """Start watching, counting the root into `tally` (raises OverBudget; None: not
        counted); False when no walk ran (the watcher could not start, ran already, or is
        walking in another thread: nothing waits for that walk, see the module's doc).
        `gate`: the walk goes on only while it is set (a walk started ahead of commands)."""
        return self._walk_whole(tally, gate, resume=False)

    def finish_walk(self, gate: threading.Event | None = None) -> bool:
        """Walk a root `start_known` started whose first snapshot did not complete it (the
        folders watched already are listed, not watched again)."""
        return self._walk_whole(None, gate, resume=True)

    def _walk_whole(self, tally: Tally | None, gate: threading.Event | None, resume: bool) -> bool:
        if not self._walk.acquire(blocking=False):
            return False
        try:
            with self._lock:
                if resume != self._partial or self.unavailable is not None:
                    return False
                if self._inotify is not None and not resume:
                    return False
                self._rescan = self._rescan or STARTING
                self._gated(gate)
                self._walk_root(tally)
                self._partial, self._linked_later = False, []
                self._known.clear()
                return self._inotify is not None or self._over_share is not None
        finally:
            self._gate = None
            self._walk.release()

    def start_known(
        self,
        folders: Iterable[str],
        gitlinks: Iterable[str],
        files: list[str],
        started: Callable[[], object] = lambda: None,
    ) -> bool:
        """Start watching a git root from its index (tree_walk.py: each folder it names
        watched, none listed; `started` is called once that is under way). Until
        `complete_untracked` has walked the folders it does not name, the watcher is
        `starting`: each take asks for a scan. `files`, the tracked paths, are looked at
        for hard links after that. False when it could not start (`unavailable` says why)
        or ran already."""
        if not self._walk.acquire(blocking=False):
            return False
        try:
            with self._lock:
                if self._inotify is not None or self.unavailable is not None:
                    return False
                self._rescan, self._partial = self._rescan or STARTING, True
                self._linked_later = files
                started()
                self._run(lambda: self._watch_known(folders, gitlinks))
                return self._inotify is not None
        finally:
            self._walk.release()

    def complete_known(self, folders: Collection[str], gitlinks: Iterable[str]) -> bool:
        """Once `start_known`'s watches are placed (this waits for them), watch the folders
        of the index as it is now that the one it read did not name: call before the
        tracked files are read. False: not started from an index, or whole already."""
        with self._lock:
            if not self._partial or self._inotify is None:
                return False
            self._run(lambda: self._watch_known(folders, gitlinks))
            return self._inotify is not None

    def complete_untracked(
        self, names: Iterable[str], since_ns: int, tracked: tuple[Container[str], ...]
    ) -> list[str] | None:
        """Walk the folders among git's untracked `names`, listed from `since_ns` on (before
        the snapshot reads any of them): the root is then watched whole, and the next take
        asks for no scan, since the snapshot read every path after its folder's watch was
        placed (a change before it is in what the snapshot read, one after in the events).
        Returns the names the listing may have missed (tree_walk.py), for the snapshot to
        add too; None: not started from an index, or it failed (a scan follows)."""
        with self._lock:
            if not self._partial or self._inotify is None:
                return None
            missed: list[str] = []

            def walk() -> None:
                missed.extend(self._watch_untracked(names, since_ns, tracked))

            self._run(walk)
            if self._inotify is None:
                return None
            self._partial = False
            self._rescan = None  # (no event was read while partial: nothing else set it)
            files, self._linked_later = self._linked_later, []
            top = str(self.root).rstrip("/")
            self._hard_links |= links_among(top, files, self._links_found)
            return missed

    def _start(self) -> None:
        self._walk_root(None)

    def _spilled(self) -> None:
        self._rescan = self._rescan or "the watcher moved to fanotify folder marks"

    def _stop(self) -> None:
        self._partial, self._linked_later = False, []
        self._known.clear()
        self._lose("the watcher stopped")
        self._windows.clear()
        if self._inotify is not None:
            self._inotify.close()
        self._inotify = None
        self.budget.give(len(self._folders))
        self._folders.clear()
        self._nested.clear()
        self._hard_links.clear()
        self._dirty.clear()
        self._created.clear()

    def close(self) -> None:
        with self._lock:
            self._stop()
            self._rescan = "the watcher was not running"

    # -- reading ------------------------------------------------------------------------

    def take(self) -> Changed:
        """What changed since the last take (the queue read dry first)."""
        if self._walk.locked():  # the scan this asks for covers what the walk has not
            return Changed(frozenset(), FROM_INDEX if self._partial else STILL_STARTING)
        with self._lock:
            if self._partial:
                return Changed(frozenset(), FROM_INDEX)
            if self._inotify is None and self.unavailable is None:
                self._start()
            if self._inotify is None:
                return Changed(frozenset(), self.unavailable or "the watcher was not running")
            for event in self._inotify.read():
                self._event(event)
            return self._result()

    def feed(self, data: bytes) -> None:
        """Handle raw inotify records as if read from the kernel (tests use this to queue
        what the kernel queues rarely, such as IN_Q_OVERFLOW)."""
        with self._lock:
            for event in inotify.parse(data):
                self._event(event)

    def open_window(self, changes: bool = False) -> NewNames | None:
        """Collect the names made from now on (`changes`: every path changed; None: the
        root is not being watched). What is queued already is read first: it happened before."""
        if self._walk.locked():
            return None
        with self._lock:
            if self._inotify is None or self._partial:
                return None
            for event in self._inotify.read():
                self._event(event)
            window = NewNames(set(), changed=set()) if changes else NewNames(self._carried)
            self._carried = self._carried if changes else set()
            self._windows.add(window)
            return window

    def changed_since(self, window: NewNames) -> frozenset[str] | None:
        """A window of changes' paths (changes.changes_of), with the files of more than one
        name, the nested repositories and the kept-out folders, whose changes no event names."""
        with self._lock:
            if self._inotify is None or window not in self._windows:
                return None
            for event in self._inotify.read():
                self._event(event)
            return changes_of(window, self._hard_links | self._nested | set(self.kept_out))

    def close_window(self, window: NewNames) -> NewNames:
        """The names made since `open_window` (the queue read dry first)."""
        with self._lock:
            if self._inotify is not None and window in self._windows:
                for event in self._inotify.read():
                    self._event(event)
            if window in self._windows:
                self._windows.remove(window)
            else:
                window.lost = window.lost or "the watcher stopped"
            return window

    def carry(self, names: set[str]) -> None:
        """Hand names back to the next window: its reader could not look into them (a
        folder the command made unreadable; a later command may make it readable again)."""
        with self._lock:
            self._carried |= names

    def _lose(self, reason: str) -> None:
        """Events may be missing (dropped, the root went, a folder could not be watched)."""
        self._walked, self._whole = None, False
        for window in self._windows:
            window.lost = window.lost or reason

    def invalidate(self, reason: str) -> None:
        """The next take asks for a full scan (a snapshot failed after this take)."""
        if self._walk.locked():
            return  # the first take after the walk asks for one anyway
        with self._lock:
            if self._partial:
                return
            self._rescan = self._rescan or reason

    def _result(self) -> Changed:
        paths = {outermost(path, self._nested) for path in self._dirty}
        if self._rescan is None and any(p.rsplit("/", 1)[-1] == ".gitignore" for p in paths):
            self._rescan = "a .gitignore changed"
        if self._rescan is None and len(paths) > MAX_PATHS:
            self._rescan = f"{len(paths)} paths changed (more than {MAX_PATHS})"
        self._hard_links = still_linked(self.root, self._hard_links, paths)
        created = frozenset(outermost(path, self._nested) for path in self._created)
        listing = self._take_listing(paths)
        changed = Changed(frozenset(paths | self._hard_links), self._rescan, created, listing)
        self._dirty.clear()
        self._created.clear()
        self._rescan = None
        if self._restart:
            self._restart = False
            self._stop()
            self._start()
        return changed

    # -- events -------------------------------------------------------------------------

    def _event(self, event: Event) -> None:
        if event.mask & inotify.IN_Q_OVERFLOW:
            notifier = "fanotify" if self.marks else "inotify"
            self._rescan = f"the kernel dropped events ({notifier} queue overflow)"
            self._lose(self._rescan)
            return
        folder = self._folders.get(event.wd)
        if folder is None:
            return  # a watch removed a moment ago; its folder is marked changed
        if event.mask & inotify.IN_IGNORED:
            del self._folders[event.wd]
            self.budget.give()
            if folder == "":
                self._root_gone("the root's watch was removed")
            return
        if not event.name:
            if folder == "" and event.mask & _ROOT_GONE:
                self._root_gone("the root was moved, deleted or unmounted")
            return
        path = f"{folder}/{event.name}" if folder else event.name
        if self._kept_out(path):
            return
        tell(self._windows, path, bool(event.mask & _NEW))
        if event.name == ".git":
            if folder and event.mask & _NEW:
                self._nested.add(folder)
                self._dirty.add(folder)
                self._created.add(folder)
            elif folder in self._nested and event.mask & _GONE:
                # No longer a repository (removed, or set aside by the sandbox): a plain
                # folder again, whose subfolders are watched from now on.
                self._nested.discard(folder)
                self._dirty.add(folder)
                self._guard(self._watch_tree, folder)
            return
        self._dirty.add(path)
        if event.mask & _NEW:
            self._created.add(path)
        if event.mask & inotify.IN_ISDIR:
            if event.mask & (inotify.IN_MOVED_FROM | inotify.IN_DELETE):
                self._unwatch(path)
            if event.mask & _NEW:
                self._unwatch(path)  # a folder moved within the root: its old watches
                self._guard(self._watch_tree, path)

    def _root_gone(self, reason: str) -> None:
        self._rescan = reason
        self._restart = True
        self._lose(reason)

    def _guard(self, action: object, path: str) -> None:
        try:
            action(path)  # type: ignore[operator]
        except InotifyError as exc:
            self._rescan = f"a new folder could not be watched ({exc.strerror or exc})"
            self._restart = True
            self._lose(self._rescan)
