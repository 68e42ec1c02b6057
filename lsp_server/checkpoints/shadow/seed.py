"""A shadow index seeded from the user's own repository, read only (blocking).

In a git work tree the user's index already holds a blob id and stat data for every
tracked file, and the user's object store holds those blobs. The first snapshot of such a
root copies that index (and its shared index, when split) as the shadow's own and borrows
the user's objects through git's alternates (`objects/info/alternates`), so `git add -A`
hashes only what differs from the index: the cost of `git status`, not of the tree.

What a revert needs never stays borrowed: a checkpoint copies the blobs it keeps into the
shadow's own store (`own_objects`), so the user's `git gc` or a rewritten history cannot
break it. When borrowed objects are gone all the same (a snapshot fails), the index is
seeded afresh (`reset`).

Seeding does not apply (a plain full scan runs) when the root is not the top of a work
tree with a `.git` folder, or when a `.gitattributes` names a `filter=` (git-lfs ...):
the shadow runs without the user's configuration, so its blobs of filtered files would
differ from the index's.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
from collections.abc import Iterable
from pathlib import Path

import attrs

from lsp_server.checkpoints.shadow import objects
from lsp_server.checkpoints.shadow.index_summary import IndexSummary, read_summary
from lsp_server.checkpoints.shadow.isolated_git import IsolatedGit, ShadowError

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def user_git_dir(work_tree: Path) -> Path | None:
    """The user's `.git` folder when `work_tree` is the top of a work tree with an index."""
    git = work_tree / ".git"
    if git.is_dir() and (git / "index").is_file() and (git / "objects").is_dir():
        return git
    return None


Key = tuple[int, int, int]
"""An index file's mtime, size and inode: which one was read."""

_summaries: dict[Path, tuple[Key, IndexSummary | None]] = {}
_summaries_lock = threading.Lock()
_reading = threading.Lock()


def index_key(index: Path) -> Key | None:
    try:
        st = index.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def user_index_summary(user: Path, whole: bool = False) -> IndexSummary | None:
    """The summary of the user's index (index_summary.py), read once while the file stays
    as it was: the first snapshot measures the root with it, and seeding reads it again.
    `whole`: with its paths, read again if they were let go (lighten_summary). A caller
    that comes while another reads waits for that read (one at a time: the roots' first
    snapshots are rare) instead of reading beside it."""
    index = user / "index"
    with _reading:
        key = index_key(index)
        if key is None:
            return None
        with _summaries_lock:
            known = _summaries.get(index)
        if known is not None and known[0] == key:
            light = known[1] is not None and known[1].files > 0 and not known[1].tracked
            if not (whole and light):
                return known[1]
        summary = read_summary(index)
        if index_key(index) != key:  # written meanwhile: read again next time
            return None
        with _summaries_lock:
            _summaries.clear()
            _summaries[index] = (key, summary)
        return summary


def read_soon(work_tree: Path) -> None:
    """Start reading the index of the git work tree `work_tree` (if it is one) in a thread
    of its own: a process that will snapshot the root calls this first thing, so that the
    read runs beside the rest of its start instead of after it (a 200,000-file index takes
    0.2-0.4 s, which the first command would otherwise wait for)."""
    user = user_git_dir(work_tree)
    if user is not None:
        thread = threading.Thread(
            target=user_index_summary, args=(user, True), name="index-read", daemon=True
        )
        thread.start()


def _forget_summary(user: Path) -> None:
    with _summaries_lock:
        _summaries.pop(user / "index", None)


def lighten_summary(user: Path) -> None:
    """Keep the user's index's summary without its paths (what a first walk needed)."""
    with _summaries_lock:
        known = _summaries.get(user / "index")
        if known is not None and known[1] is not None:
            light = attrs.evolve(known[1], tracked=frozenset(), tracked_folders=frozenset())
            _summaries[user / "index"] = (known[0], light)


def alternates_file(git: IsolatedGit) -> Path:
    return git.git_dir / "objects" / "info" / "alternates"


def is_seeded(git: IsolatedGit) -> bool:
    return alternates_file(git).exists()


def _filtered(git: IsolatedGit, user: Path, summary: IndexSummary | None) -> bool:
    """A clean/smudge filter is named in the tracked .gitattributes or info/attributes."""
    if summary is not None:
        names = list(summary.attributes)
    else:
        raw = git.run("ls-files", "-z", "--", ":(glob)**/.gitattributes", ".gitattributes")
        names = raw.decode("utf-8", "surrogateescape").split("\0")
    files = [git.work_tree / name for name in names if name]
    for path in [user / "info" / "attributes", *files]:
        with contextlib.suppress(OSError):
            if b"filter=" in path.read_bytes():
                return True
    return False


def seed(git: IsolatedGit) -> tuple[str, IndexSummary | None, Key | None] | None:
    """Seed a missing shadow index from the user's: the tree of that index (what the first
    snapshot is compared with), the summary of exactly the index copied (None when it
    changed meanwhile or could not be read) and that index's key; None when seeding does
    not apply (nothing was done)."""
    user = user_git_dir(git.work_tree)
    if user is None or git.index.exists():
        return None
    key = index_key(user / "index")
    summary = user_index_summary(user)
    _forget_summary(user)
    alternates = alternates_file(git)
    alternates.parent.mkdir(parents=True, exist_ok=True)
    alternates.write_text(f"{(user / 'objects').resolve()}\n")
    try:
        for shared in user.glob("sharedindex.*"):
            shutil.copy2(shared, git.git_dir / shared.name)
        temp = git.index.with_name("index.seed")
        shutil.copy2(user / "index", temp)  # the mtime too: git's racy-clean check
        temp.replace(git.index)
        if index_key(user / "index") != key:
            summary = key = None  # not the index copied
        if _filtered(git, user, summary):
            raise ShadowError("a .gitattributes names a filter")
        if summary is None or summary.flagged:
            _clear_flags(git)
    except (OSError, ShadowError):
        unseed(git)
        return None
    if summary is not None and summary.unmerged:
        return EMPTY_TREE, summary, key  # write-tree refuses unmerged entries: add does not
    try:
        return git.run("write-tree").decode().strip(), summary, key
    except ShadowError:  # unmerged entries: `git add -A` resolves them
        return EMPTY_TREE, summary, key


def _clear_flags(git: IsolatedGit) -> None:
    """skip-worktree (sparse checkouts) and assume-unchanged are the user's view: the
    shadow looks at every file as a full scan does."""
    raw = git.run("ls-files", "-v", "-z")
    skip: list[str] = []
    assumed: list[str] = []
    for entry in raw.decode("utf-8", "surrogateescape").split("\0"):
        if len(entry) > 2:
            tag, path = entry[0], entry[2:]
            if tag == "S" or tag == "s":
                skip.append(path)
            if tag.islower():
                assumed.append(path)
    for flag, paths in (("--no-skip-worktree", skip), ("--no-assume-unchanged", assumed)):
        if paths:
            names = "".join(f"{p}\0" for p in paths).encode("utf-8", "surrogateescape")
            git.run("update-index", "-z", flag, "--stdin", data=names)


def unseed(git: IsolatedGit) -> None:
    """Forget the seed: no index, no borrowed objects."""
    git.index.unlink(missing_ok=True)
    alternates_file(git).unlink(missing_ok=True)
    for shared in git.git_dir.glob("sharedindex.*"):
        shared.unlink(missing_ok=True)


def own_objects(git: IsolatedGit, oids: Iterable[str], max_bytes: int) -> None:
    """Copy into the shadow's own store the blobs among `oids` it holds only through the
    user's store (up to `max_bytes` each: larger ones are recorded as not stored)."""
    if not is_seeded(git):
        return
    wanted = sorted({o for o in oids if not objects.loose_path(git.git_dir, o).exists()})
    if not wanted:
        return
    checked = git.run("cat-file", "--batch-check", data="".join(f"{o}\n" for o in wanted).encode())
    small = []
    for line in checked.decode().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "blob" and int(parts[2]) <= max_bytes:
            small.append(parts[0])
    if not small:
        return
    out = git.run("cat-file", "--batch", data="".join(f"{o}\n" for o in small).encode())
    offset = 0
    while offset < len(out):
        end = out.index(b"\n", offset)
        header = out[offset:end].split()
        offset = end + 1
        if len(header) < 3:
            continue
        size = int(header[2])
        objects.write_object(git.git_dir, "blob", out[offset : offset + size])
        offset += size + 1
