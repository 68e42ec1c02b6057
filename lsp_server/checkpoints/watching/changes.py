"""What a root's watcher reports (watcher.py, fanotify_watch.py): the paths changed since
the last take, or why a full scan is needed instead; the names a command made while its
window was open (tools/shell/protected_made.py looks there); and to a reader that keeps
what it learned of files (glob's mtimes: tools/search/glob_memory.py), every path changed
since it last asked."""

from __future__ import annotations

from collections.abc import Iterable

import attrs

MAX_PATHS = 2000
"""More changed paths than this ask for a full scan: one is then cheaper than naming them."""


@attrs.frozen
class Listing:
    """What a watcher's first walk of a root listed, handed to the snapshot after it so
    that git is given the names instead of walking the root again (shadow/listed_scan.py)."""

    files: tuple[str, ...]
    """Every file and link listed (relative), in the walk's order."""
    unreadable: frozenset[str]
    """The files among them this process cannot read (git would stop at them)."""
    nested: frozenset[str]
    """The nested repositories found (watched, not entered: their gitlinks)."""
    changed: frozenset[str]
    """The paths the events named since the walk began (a folder: all below it): what
    changed after its folder was listed, made, moved or deleted."""


@attrs.frozen
class Changed:
    """Paths (relative, "/"; a folder stands for everything below it) changed since the
    last take, or why a full scan is needed instead."""

    paths: frozenset[str]
    rescan: str | None = None
    created: frozenset[str] = frozenset()
    """The paths among `paths` that are new names (created or moved in, folders too):
    only those can be ignored files that no snapshot has classified yet (ignored.py)."""
    listing: Listing | None = None
    """With a rescan right after a whole first walk whose events were all read: its
    listing, which stands for the walk such a scan would make."""


@attrs.define(eq=False)  # by identity: held weakly by the watcher
class NewNames:
    """Names (relative, "/") created or moved in under a root while a window was open."""

    created: set[str] = attrs.Factory(set)
    lost: str | None = None
    """Why some may be missing (events dropped, the watcher stopped): then look otherwise."""
    changed: set[str] | None = None
    """A window of changes (`open_window(changes=True)`): every path reported changed, new
    or not, instead of the new names."""


MAX_WINDOW_CHANGES = 10_000


def tell(windows: Iterable[NewNames], path: str, new: bool) -> None:
    """A path the events report changed (`new`: created or moved in), to the open windows."""
    for window in windows:
        if window.changed is None:
            if new:
                window.created.add(path)
        elif len(window.changed) < MAX_WINDOW_CHANGES:
            window.changed.add(path)
        else:
            window.lost = window.lost or f"more than {MAX_WINDOW_CHANGES} paths changed"


def changes_of(window: NewNames, always: Iterable[str]) -> frozenset[str] | None:
    """What a window of changes heard since it opened or was last asked, with `always` (the
    paths no event speaks for); None when some may be missing. Asked again, it starts anew."""
    if window.lost is not None or window.changed is None:
        return None
    heard, window.changed = window.changed, set()
    return frozenset(heard).union(always)


def outermost(path: str, nested: set[str]) -> str:
    """A path inside a nested repository stands for the repository (its gitlink)."""
    parts = path.split("/")
    for n in range(1, len(parts)):
        folder = "/".join(parts[:n])
        if folder in nested:
            return folder
    return path
