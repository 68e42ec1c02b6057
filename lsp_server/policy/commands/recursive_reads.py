"""Recursive content searches (`grep -r`, `rg`) read files their arguments do not name.

`grep -r KEY .` prints `.env`; `rg PRIVATE` prints `keys/server.pem` (rg skips hidden
files, not secrets); `grep -R x .` follows a symlink out of the workspace. Such a search is
a plain read only when the files it would read hold no secret and no link leads out: for
grep a walk of its folders; for rg, `rg --files` with the command's own ignore, hidden,
link and glob options lists exactly what it would search (.gitignore included). Both are
bounded: a tree too large to check counts as not a plain read (the `grep` tool skips
secret files by itself and is the better choice there).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_server.policy.commands.hidden_reads import link_concern, linked
from lsp_server.policy.commands.options import abbreviates

if TYPE_CHECKING:
    from lsp_server.policy.commands.command_paths import Places

MAX_ENTRIES = 20_000
_GREPS = frozenset(("grep", "egrep", "fgrep"))
# grep options whose value is the next word (so it is not taken for a path).
_GREP_VALUED = frozenset("efABCmdD")
_RG_VALUED = frozenset("egtTmABCMjE")


def _grep_recursion(args: Sequence[str]) -> tuple[bool, bool]:
    """(recursive, follows links) for grep's arguments."""
    recursive = follows = False
    for index, arg in enumerate(args):
        if arg == "--":
            break
        if arg.startswith("--"):
            if abbreviates(arg, "--dereference-recursive"):
                recursive = follows = True
            elif abbreviates(arg, "--recursive") or arg in ("--directories=recurse",):
                recursive = True
        elif arg.startswith("-") and not arg.startswith("-e"):
            letters = arg[1:]
            follows = follows or "R" in letters
            recursive = recursive or "r" in letters or "R" in letters
            if arg == "-d" and index + 1 < len(args) and args[index + 1] == "recurse":
                recursive = True
    return recursive, follows


def _positional(args: Sequence[str], valued: frozenset[str]) -> list[str]:
    """Non-option words, skipping the values of options that take one."""
    found: list[str] = []
    skip = False
    options_done = False
    for arg in args:
        if skip:
            skip = False
        elif options_done or not arg.startswith("-") or arg == "-":
            found.append(arg)
        elif arg == "--":
            options_done = True
        elif not arg.startswith("--") and arg[-1] in valued and len(arg) == 2:
            skip = True
    return found


# rg options that change which files it searches, kept for `rg --files`.
_RG_LISTING_FLAGS = frozenset(
    ("--hidden", "-.", "-u", "-uu", "-uuu", "--unrestricted", "-L", "--follow")
)
_RG_LISTING_VALUED = frozenset(("-g", "--glob", "--iglob", "-t", "--type", "-T", "--type-not"))
_LISTING_SECONDS = 10.0


def rg_listing(args: Sequence[str], paths: Sequence[str]) -> list[str]:
    """`rg --files` with the file-selecting options of `args`, for `paths`."""
    kept: list[str] = []
    for index, arg in enumerate(args):
        if arg in _RG_LISTING_FLAGS or arg.startswith("--no-ignore"):
            kept.append(arg)
        elif arg in _RG_LISTING_VALUED and index + 1 < len(args):
            kept += [arg, args[index + 1]]
        elif arg.split("=", 1)[0] in _RG_LISTING_VALUED and "=" in arg:
            kept.append(arg)
    return ["--files", "--null", *kept, "--", *paths]


def rg_concern(
    rg: str, args: Sequence[str], paths: Sequence[str], cwd: Path, places: Places
) -> str | None:
    """Why the files `rg args paths` would search include a secret or lead out."""
    follows = any(a in ("-L", "--follow") for a in args)
    try:
        process = subprocess.Popen(
            [rg, *rg_listing(args, paths)],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None  # no rg: the command fails the same way
    try:
        out, _ = process.communicate(timeout=_LISTING_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return "rg would search too many files to check them for secrets"
    names = out.split(b"\0")
    if len(names) > MAX_ENTRIES:
        return "rg would search too many files to check them for secrets"
    files: list[Path] = []
    for raw in names:
        if not raw:
            continue
        path = cwd / os.fsdecode(raw)
        if follows:
            real = Path(os.path.realpath(path))
            if not places.inside(real):
                return f"the search follows {path} out of the workspace"
        if any(places.may_be_secret(part) for part in path.parts) and places.is_secret(path):
            return f"the search reads {path}, which looks like a secret"
        files.append(path)
    # A hard link among them may be a secret (or an outside file) under another name.
    return link_concern(linked(files), places)


def search_targets(words: Sequence[str]) -> tuple[list[str], bool, bool] | None:
    """(folders or files searched, hidden files included, links followed) for a recursive
    search; None when the command is not one."""
    program, args = words[0], words[1:]
    if program in _GREPS:
        recursive, follows = _grep_recursion(args)
        if not recursive:
            return None
        positional = _positional(args, _GREP_VALUED)
        pattern_given = any(a.startswith(("-e", "-f", "--regexp", "--file")) for a in args)
        paths = positional if pattern_given else positional[1:]
        return paths or ["."], True, follows
    if program == "rg":
        positional = _positional(args, _RG_VALUED)
        pattern_given = any(a.startswith(("-e", "-f", "--regexp", "--file")) for a in args)
        paths = positional if pattern_given else positional[1:]
        hidden = any(
            a in ("--hidden", "-.", "-uu", "-uuu") or abbreviates(a, "--no-ignore-hidden")
            for a in args
        )
        follows = any(a in ("-L", "--follow") for a in args)
        return paths or ["."], hidden, follows
    return None


def walk_concern(
    top: Path, places: Places, hidden: bool, follows: bool, budget: list[int]
) -> str | None:
    """Why searching everything under `top` would read a secret or leave the workspace."""
    pending = [top]
    files: list[Path] = []
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            budget[0] -= 1
            if budget[0] < 0:
                return f"{top} holds too many files to check for secrets"
            if entry.name == ".git" or (not hidden and entry.name.startswith(".")):
                continue
            path = Path(entry.path)
            if entry.is_symlink():
                if not follows:
                    continue
                real = Path(os.path.realpath(path))
                if not places.inside(real):
                    return f"the search follows {path} out of the workspace"
                path = real
            is_dir = entry.is_dir()
            if places.may_be_secret(entry.name) and places.is_secret(
                path / "x" if is_dir else path
            ):
                return f"the search reads {path}, which looks like a secret"
            if is_dir:
                pending.append(path)
            else:
                files.append(path)
    # A hard link among them may be a secret (or an outside file) under another name.
    return link_concern(linked(files), places)


def git_grep_concern(git_args: Sequence[str], cwd: Path, places: Places) -> str | None:
    """`git grep` reads tracked files (a committed `.env` too); with `--no-index` or
    `--untracked`, every file of the folder."""
    where = cwd
    index = 0
    while index < len(git_args) and git_args[index].startswith("-"):
        if git_args[index] == "-C" and index + 1 < len(git_args):
            where = where / git_args[index + 1]
            index += 2
        else:
            index += 1
    rest = git_args[index + 1 :]
    if any(a in ("--no-index", "--untracked") for a in rest):
        return walk_concern(where, places, True, False, [MAX_ENTRIES])
    try:
        done = subprocess.run(
            ["git", "ls-files", "-z"],
            cwd=where,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_LISTING_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "git could not list the files git grep would search"
    names = done.stdout.split(b"\0")
    if len(names) > MAX_ENTRIES:
        return "git grep would search too many files to check them for secrets"
    for raw in names:
        path = where / os.fsdecode(raw)
        if raw and any(places.may_be_secret(p) for p in path.parts) and places.is_secret(path):
            return f"git grep reads {path}, a tracked file that looks like a secret"
    return None
