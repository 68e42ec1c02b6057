"""A session of its own (`toolhost mcp --isolate`): a git worktree made from the LIVE tree.

`create` adds a detached worktree of the root's repository at HEAD beside toolhost's state
folder (`<state>/../toolhost-worktrees/<hash of the root>/<id>`: toolhost works in no
folder inside its own state; git lists it under `.git/worktrees`), then brings what HEAD
does not hold: the uncommitted changes of the tracked files (`git diff --binary HEAD`,
deletions included) and the untracked files that are not ignored. Its base is the
worktree's tree right after, written with a temporary index (nothing in the user's index
or refs changes). The record of where it came from and of its base is kept inside the
state folder (`<state>/worktrees/<hash of the session's root>.json`), out of the
session's reach. `changes` lists what changed since the base, and `merged` merges one file
three-way with the root's current text (workspace_apply.py).
The standard library only: `toolhost mcp`'s front calls `create` before anything loads.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import NamedTuple

LINK_MODES = ("120000", "160000")  # symbolic links and submodules: not applied


class IsolationError(Exception):
    """Why a worktree could not be made (said to the user at start)."""


class Isolation(NamedTuple):
    source: Path  # the root the session was started on (R)
    top: Path  # the worktree (W)
    root: Path  # the session's root inside W (R's place in its repository)
    base: str  # W's tree when the session started or last applied
    record: Path
    gitdir: Path  # W's git folder (in R's .git/worktrees), recorded at the start


class Changed(NamedTuple):
    rel: str  # relative to the repository's top
    base: bytes | None  # None: not in the base
    mine: bytes | None  # None: deleted in the worktree
    link: bool
    executable: bool  # in the worktree now


def _git(
    cwd: Path,
    *args: str,
    data: bytes | None = None,
    index: Path | None = None,
    gitdir: Path | None = None,
) -> bytes:
    """`gitdir`: the worktree's git folder as recorded at its start, given explicitly: the
    session can rewrite the worktree's `.git` file, which must not choose the repository
    (and its config: filters, fsmonitor) that toolhost's own git runs with."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    where = ["--git-dir", str(gitdir), "--work-tree", str(cwd)] if gitdir else []
    done = subprocess.run(
        ["git", "-c", "core.fsmonitor=false", "-C", str(cwd), *where, *args],
        input=data,
        capture_output=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise IsolationError(f"git {args[0]} failed: {done.stderr.decode(errors='replace')}")
    return done.stdout


def _digest(path: Path) -> str:
    return hashlib.sha256(str(path).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def trees_folder(state: Path) -> Path:
    """Where the worktrees go: beside the state folder, not in it."""
    return state.resolve().parent / "toolhost-worktrees"


def record_of(root: Path, state: Path) -> Path:
    return state / "worktrees" / f"{_digest(root.resolve())}.json"


def create(source: Path, state: Path) -> Isolation:
    """A worktree of `source`'s repository holding its live tree; IsolationError if `source`
    is not in a git repository with a commit, or git refuses."""
    try:
        top = Path(_git(source, "rev-parse", "--show-toplevel").decode().strip())
        _git(source, "rev-parse", "--verify", "HEAD")
    except (IsolationError, OSError) as exc:
        raise IsolationError(
            f"{source} is not in a git repository with a commit ({exc}); --isolate needs one"
        ) from None
    rel = os.path.relpath(os.path.realpath(source), os.path.realpath(top))
    tree = trees_folder(state) / _digest(source.resolve()) / os.urandom(4).hex()
    tree.parent.mkdir(parents=True, exist_ok=True)
    _git(top, "worktree", "add", "--detach", str(tree), "HEAD")
    patch = _git(top, "diff", "--binary", "HEAD")
    if patch:
        _git(tree, "apply", "--binary", data=patch)
    listed = _git(top, "ls-files", "-o", "--exclude-standard", "-z")
    for name in filter(None, listed.decode("utf-8", "surrogateescape").split("\0")):
        if name.endswith("/"):
            continue  # a repository of its own inside: not copied
        target = tree / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(top / name, target, follow_symlinks=False)
    root = (tree / rel).resolve()
    gitdir = Path(_git(tree, "rev-parse", "--absolute-git-dir").decode().strip())
    base = tree_of(tree, gitdir)
    isolation = Isolation(source.resolve(), tree, root, base, record_of(root, state), gitdir)
    save(isolation)
    return isolation


def save(isolation: Isolation) -> None:
    data = {
        "source": str(isolation.source),
        "top": str(isolation.top),
        "root": str(isolation.root),
        "base": isolation.base,
        "gitdir": str(isolation.gitdir),
    }
    isolation.record.parent.mkdir(parents=True, exist_ok=True)
    temp = isolation.record.with_suffix(".tmp")
    temp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    temp.replace(isolation.record)


def find(root: Path, state: Path) -> Isolation | None:
    """The isolation whose session root is `root`, when there is one."""
    record = record_of(root, state)
    try:
        data = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if Path(data["root"]) != root.resolve():
        return None
    top, gitdir = Path(data["top"]), Path(data["gitdir"])
    return Isolation(Path(data["source"]), top, root.resolve(), data["base"], record, gitdir)


def notice(isolation: Isolation) -> str:
    """What heads the session's first result: where it works and how its change gets back."""
    return (
        f"[isolated: you work in {isolation.root}, a git worktree made from "
        f"{isolation.source} with its uncommitted changes; your writes and commands stay "
        "here. Bring your change back with use_capability action=call id=workspace:apply "
        "(one diff the user approves)]"
    )


def tree_of(top: Path, gitdir: Path) -> str:
    """The tree of the worktree's files as they are (ignored files left out)."""
    with tempfile.TemporaryDirectory() as scratch:
        index = Path(scratch) / "index"
        # A copy of the worktree's own index: its stat data spares hashing unchanged files.
        with contextlib.suppress(OSError):
            shutil.copyfile(gitdir / "index", index)
        _git(top, "add", "-A", index=index, gitdir=gitdir)
        return _git(top, "write-tree", index=index, gitdir=gitdir).decode().strip()


def changes(isolation: Isolation, now: str) -> list[Changed]:
    """Every path changed between the base tree and `now` (added, changed, deleted)."""
    top, gitdir = isolation.top, isolation.gitdir
    out = _git(top, "diff-tree", "-r", "--no-renames", "-z", isolation.base, now, gitdir=gitdir)
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    found: list[Changed] = []
    for meta, rel in zip(fields[0::2], fields[1::2], strict=False):
        if not meta.startswith(":"):
            continue
        old_mode, new_mode, old_sha, new_sha, _ = meta[1:].split(" ")
        link = old_mode in LINK_MODES or new_mode in LINK_MODES
        base = None if set(old_sha) == {"0"} or link else _blob(isolation, old_sha)
        mine = None if set(new_sha) == {"0"} or link else _blob(isolation, new_sha)
        found.append(Changed(rel, base, mine, link, new_mode == "100755"))
    return found


def rebased(isolation: Isolation, now: str, kept: list[str]) -> str:
    """The next base: `now`, but the paths in `kept` (not applied) as in the old base."""
    with tempfile.TemporaryDirectory() as scratch:
        index = Path(scratch) / "index"
        top, gitdir = isolation.top, isolation.gitdir
        _git(top, "read-tree", now, index=index, gitdir=gitdir)
        for rel in kept:
            entry = _git(top, "ls-tree", "-z", isolation.base, "--", rel, gitdir=gitdir)
            if entry:
                _git(
                    top,
                    "update-index",
                    "-z",
                    "--index-info",
                    data=entry,
                    index=index,
                    gitdir=gitdir,
                )
            else:
                _git(top, "update-index", "--force-remove", "--", rel, index=index, gitdir=gitdir)
        return _git(top, "write-tree", index=index, gitdir=gitdir).decode().strip()


def _blob(isolation: Isolation, sha: str) -> bytes:
    return _git(isolation.top, "cat-file", "blob", sha, gitdir=isolation.gitdir)


def merged(base: bytes | None, mine: bytes | None, theirs: bytes | None) -> bytes | bool | None:
    """The root's file after taking the session's change base -> mine into `theirs` (the
    root's text now): bytes, None (deleted), or False when the changes overlap."""
    if theirs in (base, mine):
        return mine
    if mine == base:
        return theirs
    if base is None or mine is None or theirs is None:
        return False  # added on both sides, or deleted on one and changed on the other
    from lsp_server.core.diffs import merge_lines

    try:
        texts = [data.decode("utf-8") for data in (theirs, base, mine)]
    except UnicodeDecodeError:
        return False  # binary, changed on both sides
    result = merge_lines(*texts)
    return False if result is None else result.encode("utf-8")
