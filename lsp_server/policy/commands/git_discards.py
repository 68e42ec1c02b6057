"""git commands that discard uncommitted changes, and whose changes they would drop.

`git stash`, `git checkout -- <paths>` / `git checkout .`, `git restore <paths>`,
`git reset --hard`, `git clean -f`, and switching branches (`git switch`, `git checkout
<branch>`) with uncommitted changes: in a workspace several agents share, each of these
can drop another session's work. Such a command asks in every mode (guards.py), and the
question names the files it would touch that have uncommitted changes and, from the
root's activity log (runtime/sessions/activity.py), the session that last changed each.

The dirty files come from `git status` run with the repository's hooks and fsmonitor off
(a repository's config must not run programs at approval time).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import attrs

from lsp_server.policy.commands.options import git_subcommand

if TYPE_CHECKING:
    from lsp_server.runtime.sessions.activity import WorkspaceActivity

Scope = Literal["tracked", "untracked", "both"]
MAX_FILES_NAMED = 12
_TIMEOUT_SECONDS = 10.0
_GLOB = frozenset("*?[")


@attrs.frozen
class Discard:
    """What a git command would throw away: uncommitted changes of tracked files,
    untracked files, or both, under `paths` (relative to the command's folder; empty:
    the whole repository)."""

    scope: Scope
    paths: tuple[str, ...] = ()
    switch: bool = False
    """Switching branches: git carries the changes over or stops, unless forced."""


def _positional(args: Sequence[str], with_value: frozenset[str] = frozenset()) -> list[str]:
    found, skip = [], False
    for word in args:
        if skip:
            skip = False
        elif word in with_value:
            skip = True
        elif not word.startswith("-"):
            found.append(word)
    return found


def _after_dashes(args: Sequence[str]) -> tuple[list[str], list[str]] | None:
    if "--" not in args:
        return None
    index = list(args).index("--")
    return list(args[:index]), list(args[index + 1 :])


def _stash(rest: Sequence[str]) -> Discard | None:
    if rest and not rest[0].startswith("-") and rest[0] not in ("push", "save"):
        return None  # list, show, apply, pop, drop, branch ...: nothing of the tree goes
    untracked = any(w in ("-u", "--include-untracked", "-a", "--all") for w in rest)
    split = _after_dashes(rest)
    return Discard("both" if untracked else "tracked", tuple(split[1]) if split else ())


def _checkout(rest: Sequence[str], cwd: Path) -> Discard | None:
    split = _after_dashes(rest)
    if split is not None:
        return Discard("tracked", tuple(split[1]))
    words = _positional(rest, frozenset(("-b", "-B", "--orphan")))
    if any(w in ("-b", "-B", "--orphan") for w in rest) and not _forced(rest):
        return None  # a new branch from here keeps every change
    paths = [w for w in words if w == "." or os.path.lexists(cwd / w)]
    if paths:
        return Discard("tracked", tuple(paths))
    return Discard("tracked", switch=not _forced(rest))  # switching branches


def _forced(rest: Sequence[str]) -> bool:
    return any(w in ("-f", "--force", "--discard-changes") for w in rest)


def _restore(rest: Sequence[str]) -> Discard | None:
    staged = any(w in ("-S", "--staged") for w in rest)
    worktree = any(w in ("-W", "--worktree") for w in rest)
    if staged and not worktree:
        return None  # only unstages
    split = _after_dashes(rest)
    paths = split[1] if split else _positional(rest, frozenset(("-s", "--source")))
    return Discard("tracked", tuple(paths))


def _clean(rest: Sequence[str]) -> Discard | None:
    forced = dry = False
    for word in rest:
        if word == "--force" or (
            word.startswith("-") and not word.startswith("--") and "f" in word
        ):
            forced = True
        if word == "--dry-run" or (
            word.startswith("-") and not word.startswith("--") and "n" in word
        ):
            dry = True
    if not forced or dry:
        return None
    split = _after_dashes(rest)
    paths = split[1] if split else _positional(rest, frozenset(("-e", "--exclude")))
    return Discard("untracked", tuple(paths))


def discards(words: Sequence[str], cwd: Path) -> Discard | None:
    """What the git command `words` (program first) would discard; None if nothing."""
    found = git_subcommand(words[1:])
    if found is None:
        return None
    subcommand, rest = found
    if subcommand == "stash":
        return _stash(rest)
    if subcommand == "checkout":
        return _checkout(rest, cwd)
    if subcommand == "restore":
        return _restore(rest)
    if subcommand == "reset":
        return Discard("tracked") if "--hard" in rest else None
    if subcommand == "clean":
        return _clean(rest)
    if subcommand == "switch":
        creates = any(w in ("-c", "-C", "--create", "--force-create") for w in rest)
        if creates and not _forced(rest):
            return None
        return Discard("tracked", switch=not _forced(rest))
    return None


def dirty_files(cwd: Path, discard: Discard) -> list[Path] | None:
    """The files with uncommitted changes the command would touch (real paths); None
    when git cannot tell (not a repository, git missing)."""
    top = _git(["rev-parse", "--show-toplevel"], cwd)
    listing = _git(["status", "--porcelain=v1", "-z", "--untracked-files=all"], cwd)
    if top is None or listing is None:
        return None
    root = Path(top.strip())
    found: list[Path] = []
    entries = listing.split("\0")
    index = 0
    while index < len(entries):
        entry = entries[index]
        index += 1
        if len(entry) < 4:
            continue
        code, name = entry[:2], entry[3:]
        if code[0] in "RC":
            index += 1  # a rename's or copy's source follows
        untracked = code == "??"
        wanted = discard.scope == "both" or (discard.scope == "untracked") == untracked
        path = root / name
        if wanted and _under(path, cwd, discard.paths):
            found.append(path)
    return found


def _under(path: Path, cwd: Path, specs: Sequence[str]) -> bool:
    if not specs:
        return True
    for spec in specs:
        if _GLOB.intersection(spec) or spec.startswith(":"):
            return True  # a pattern or magic pathspec: count every file as touched
        target = Path(os.path.normpath(cwd / spec))
        if path == target or target in path.parents:
            return True
    return False


def _git(args: Sequence[str], cwd: Path) -> str | None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_OPTIONAL_LOCKS"] = "0"
    command = ["git", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", *args]
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.decode("utf-8", "surrogateescape") if done.returncode == 0 else None


def discard_reason(
    words: Sequence[str], cwd: Path, activity: WorkspaceActivity | None
) -> str | None:
    """Why a git command must ask: the uncommitted changes it would drop, by whom."""
    discard = discards(words, cwd)
    if discard is None:
        return None
    dirty = dirty_files(cwd, discard)
    if not dirty:
        return None  # nothing uncommitted that it would touch (or not a repository)
    writes = activity.writes() if activity is not None else []
    last = {w.path: w for w in writes}
    named = []
    for path in dirty[:MAX_FILES_NAMED]:
        write = last.get(str(path)) or last.get(os.path.realpath(path))
        by = write.label() if write is not None else "no toolhost session (the user or a program)"
        named.append(f"{_shown(path, cwd)} (last changed by {by})")
    more = f" and {len(dirty) - MAX_FILES_NAMED} more" if len(dirty) > MAX_FILES_NAMED else ""
    sessions = sorted({last[str(p)].who() for p in dirty if str(p) in last})
    whose = f" of {', '.join(sessions)}" if sessions else ""
    files = f"{len(dirty)} file{'s' if len(dirty) != 1 else ''}: {', '.join(named)}{more}"
    if discard.switch:
        return (
            f"`{' '.join(words)}` switches branches with the uncommitted changes{whose} in "
            f"{files} (git carries them over or stops; forced, they would be lost)"
        )
    return f"`{' '.join(words)}` would discard the uncommitted changes{whose} in {files}"


def _shown(path: Path, cwd: Path) -> str:
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)
