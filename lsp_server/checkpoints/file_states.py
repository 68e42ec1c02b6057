"""What a checkpoint records of one file: its state on disk (a symlink, a file under the size
limit by content, a larger one by a pointer to its git blob id) and the record of how it
changed between two states (created, deleted, modified, moved)."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Container, Iterable, Iterator
from pathlib import Path

from lsp_server.checkpoints import revert_disk
from lsp_server.checkpoints.records import FileRecord
from lsp_server.checkpoints.restore import Blocked, Current, Present
from lsp_server.checkpoints.shadow import objects
from lsp_server.checkpoints.shadow.large_files import pointer_of
from lsp_server.checkpoints.shadow.tree_changes import Entry, TreeChange
from lsp_server.sandbox.protected_scan import may_be_placeholder


def disk_state(
    path: Path, max_file_bytes: int, st: os.stat_result | None = None, root: Path | None = None
) -> Current:
    """What `path` holds on disk (`st`: its lstat when the caller has just taken it). With
    `root`, read beneath it as a revert reads (revert_disk.py): a path that a symlink on
    its way (swapped in by a race) leads to is not in the root, so nothing from outside
    becomes a state a revert would put back."""
    if root is not None:
        # As text: Path.relative_to costs more than the read of a small file.
        text, top = str(path), str(root).rstrip("/") + "/"
        rel = text[len(top) :] if text.startswith(top) else ""
        state = revert_disk.read_state(root, rel, max_file_bytes, hard_links=False)
        return None if isinstance(state, Blocked) else state
    try:
        st = os.lstat(path) if st is None else st
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return Present.of(os.fsencode(path.readlink()), 0o120000)
    if not stat.S_ISREG(st.st_mode):
        return Present(None, stat.S_IFDIR, "not-a-file")
    mode = 0o100755 if st.st_mode & 0o100 else 0o100644
    if st.st_size > max_file_bytes:
        pointer = pointer_of(path)
        return Present(None, mode, objects.object_id("blob", pointer))
    try:
        return Present.of(_read_all(path, st.st_size), mode)
    except OSError:
        return None


def _read_all(path: Path, size: int) -> bytes:
    """The file's bytes with the fewest system calls (open, read, read, close): writers'
    checkpoints read small files on the event loop, where each call can wait for the GIL."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        chunks = [os.read(fd, size + 1)]
        while chunks[-1]:
            chunks.append(os.read(fd, 1 << 20))
        return b"".join(chunks)
    finally:
        os.close(fd)


def git_mode(path: Path) -> int | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return 0o100755 if st.st_mode & 0o100 else 0o100644


def paths_of(moves: Iterable[tuple[Path, Path | None]]) -> list[Path]:
    paths: list[Path] = []
    for source, destination in moves:
        for path in (source, destination):
            if path is not None and path not in paths:
                paths.append(path)
    return paths


def relative(root: Path, path: Path) -> str:
    """`path` below `root`, with "/" (as text where it can: Path.relative_to cost more than
    the rest of a writer's record)."""
    text, top = str(path), str(root).rstrip("/") + "/"
    if text.startswith(top):
        return text[len(top) :]
    return path.relative_to(root).as_posix()


def file_record(path: str, old: Entry | None, new: Entry | None) -> FileRecord | None:
    if old == new:
        return None
    if old is None:
        return FileRecord(path, "created", None, new)
    if new is None:
        return FileRecord(path, "deleted", old, None)
    return FileRecord(path, "modified", old, new)


def moved_record(
    root: Path,
    source: Path,
    destination: Path,
    before: dict[Path, Entry | None],
    after: dict[Path, Entry | None],
) -> FileRecord | None:
    if after.get(source) is not None or after.get(destination) is None:
        return None  # the move did not happen
    if before.get(destination) is not None:
        return None  # it replaced a file: two plain records say that better
    return FileRecord(
        relative(root, destination),
        "moved",
        before[source],
        after[destination],
        source=relative(root, source),
    )


def record_of(change: TreeChange) -> FileRecord:
    if change.status == "A":
        return FileRecord(change.path, "created", None, change.new)
    if change.status == "D":
        return FileRecord(change.path, "deleted", change.old, None)
    if change.status == "R":
        return FileRecord(change.path, "moved", change.old, change.new, source=change.source)
    return FileRecord(change.path, "modified", change.old, change.new)


EMPTY_BLOB = objects.object_id("blob", b"")


def is_nested_repo(change: TreeChange) -> bool:
    return any(e is not None and e.is_gitlink for e in (change.old, change.new))


def is_placeholder_change(change: TreeChange) -> bool:
    """An empty protected name that appeared or went: the sandbox's placeholder for another
    command running meanwhile (sandbox/placeholders.py), not this command's change."""
    entry = {"A": change.new, "D": change.old}.get(change.status)
    return entry is not None and entry.oid == EMPTY_BLOB and may_be_placeholder(change.path)


def unpair_placeholders(changes: list[TreeChange]) -> Iterator[TreeChange]:
    """The changes, a placeholder's removal that git paired with an empty file made (a
    rename of identical content) seen as the two changes it is."""
    for change in changes:
        old, source = change.old, change.source
        if source and old and old.oid == EMPTY_BLOB and may_be_placeholder(source):
            yield TreeChange("A", change.path, None, change.new)
            yield TreeChange("D", source, old, None)
        else:
            yield change


def write_records(
    moves: Iterable[tuple[Path, Path | None]],
    before: dict[Path, Entry | None],
    after: dict[Path, Entry | None],
    root_of: Callable[[Path], Path | None],
) -> dict[Path, list[FileRecord]]:
    """A writer's records per root, from the states of its paths before and after."""
    records: dict[Path, list[FileRecord]] = {}
    taken: set[Path] = set()
    for source, destination in moves:
        root = root_of(source)
        if root is None:
            continue
        if destination is not None and before[source] is not None:
            moved = moved_record(root, source, destination, before, after)
            if moved is not None:
                records.setdefault(root, []).append(moved)
                taken |= {source, destination}
    for path, old in before.items():
        root = root_of(path)
        if root is None or path in taken:
            continue
        record = file_record(relative(root, path), old, after[path])
        if record is not None:
            records.setdefault(root, []).append(record)
    return records


Lstats = dict[Path, os.stat_result | None]


def small_lstats(paths: Iterable[Path], skip: Container[Path], limit: int) -> Lstats | None:
    """The lstat of each path not in `skip` (None: absent) when their sizes add up to at
    most `limit` bytes (small enough to read on the event loop: a few KiB cost less than a
    worker-thread round trip, as FileService.read_text); None when they do not."""
    found: Lstats = {}
    total = 0
    for path in paths:
        if path not in skip:
            try:
                found[path] = st = os.lstat(path)
            except OSError:
                found[path] = None
                continue
            total += st.st_size
    return found if total <= limit else None
