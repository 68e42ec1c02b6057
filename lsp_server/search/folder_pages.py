"""ls of a folder of any size: the first page in name order, and how many entries there
are, from one streaming pass (Walker.scan).

The order is name order, as for a small folder: the page is the `limit` smallest names
the rules keep, picked while the folder streams by (a heap of `limit` entries), so a
folder of a million entries costs one pass and `limit` stats, never a million objects
held or sorted. Recursive listings go depth first, each folder followed by its own
page; the folders past the page are walked only to count what they hold. Past the time
limit the pass stops where it is: the rows and the total are then what it saw.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path

import attrs

from lsp_server.search.ignore import NOISE_DIRS, IgnoreLayer, Walker
from lsp_server.search.listing import Entry, readlink


@attrs.define
class FolderPage:
    entries: list[Entry] = attrs.Factory(list)
    """The rows shown, in listing order."""
    total: int = 0
    """Every entry the rules keep, down to the depth (a lower bound when timed out), the
    skipped ones included."""
    timed_out: bool = False


def list_folder(
    folder: Path,
    *,
    depth: int,
    ignore_base: Path,
    excluded: Iterable[str],
    limit: int,
    timeout_seconds: float,
    unreadable: list[tuple[str, str]] | None = None,
    keep: Callable[[str], bool] | None = None,
    offset: int = 0,
) -> FolderPage:
    """After the first `offset` (a later page: they are picked the same way, not
    stat'ed), the first `limit` entries of `folder` down to `depth` levels (1: its own entries),
    each folder's entries right after it, in name order; and how many there are. Hidden
    files are shown; VCS and dependency folders, ignored and excluded (secret) files are
    not. `keep` (an absolute path) drops an entry before it is counted; `unreadable`
    gets (folder, why) for each folder that could not be opened."""
    walker = Walker(ignore_base, hidden=True, excluded=tuple(excluded), skip_dirs=NOISE_DIRS)
    if unreadable is not None:
        walker.unreadable = unreadable
    page = FolderPage()
    deadline = time.monotonic() + timeout_seconds
    rows = 0  # in listing order, the skipped ones included
    end = offset + limit

    def visit(directory: str, prefix: str, level: int, layers: list[IgnoreLayer]) -> None:
        if page.timed_out:
            return
        if time.monotonic() > deadline:
            page.timed_out = True
            return
        nonlocal rows
        room = max(end - rows, 0)
        scan = walker.scan(directory, layers, room, deadline)
        page.timed_out |= scan.timed_out
        shown = scan.page
        if keep is not None:
            dropped = [entry for entry in scan.page if not keep(entry.path)]
            scan.count -= len(dropped)
            shown = [entry for entry in scan.page if entry not in dropped]
        page.total += scan.count
        inside = level < depth
        for entry in shown:
            rel = prefix + entry.name
            rows += 1
            if rows <= offset or rows > end:  # not on the page: counted, not looked at
                if entry.is_dir(follow_symlinks=False) and inside:
                    visit(entry.path, rel + "/", level + 1, scan.layers)
                continue
            if entry.is_symlink():
                row = Entry(rel, False, None, link_target=readlink(entry.path))
            elif entry.is_dir():
                row = Entry(rel, True, None)
            else:
                try:
                    size: int | None = entry.stat(follow_symlinks=False).st_size
                except OSError:
                    size = None
                row = Entry(rel, False, size)
            page.entries.append(row)
            if row.is_dir and inside:
                visit(entry.path, rel + "/", level + 1, scan.layers)
        if inside:  # the folders past the page: counted, not shown
            on_page = {entry.name for entry in scan.page}
            for entry in sorted(scan.folders, key=lambda e: e.name):
                if entry.name not in on_page and (keep is None or keep(entry.path)):
                    visit(entry.path, prefix + entry.name + "/", level + 1, scan.layers)

    visit(str(folder), "", 1, walker.outer_layers(folder))
    return page
