"""What a root's watcher reports (watcher.py, fanotify_watch.py): the paths changed since
the last take, or why a full scan is needed instead; and the names a command made while
its window was open (tools/shell/protected_made.py looks there)."""

from __future__ import annotations

import attrs

MAX_PATHS = 2000
"""More changed paths than this ask for a full scan: one is then cheaper than naming them."""


@attrs.frozen
class Changed:
    """Paths (relative, "/"; a folder stands for everything below it) changed since the
    last take, or why a full scan is needed instead."""

    paths: frozenset[str]
    rescan: str | None = None
    created: frozenset[str] = frozenset()
    """The paths among `paths` that are new names (created or moved in, folders too):
    only those can be ignored files that no snapshot has classified yet (ignored.py)."""


@attrs.define(eq=False)  # by identity: held weakly by the watcher
class NewNames:
    """Names (relative, "/") created or moved in under a root while a window was open."""

    created: set[str] = attrs.Factory(set)
    lost: str | None = None
    """Why some may be missing (events dropped, the watcher stopped): then look otherwise."""
