"""Reads whose files the command's words do not show, for command_paths.py.

- **Hard links.** A hard link is its file under another name: `cat notes.txt` prints
  `.env` when notes.txt is a second name of it, and a link can give a file from outside
  the workspace an innocent name. read_file and grep refuse such a file
  (fs/hardlinks.py); a shell read of it is not a plain read either: a regular
  file with more than one name is one only when a bounded scan of its root finds all its
  names there and none is a secret.
- **File names from the input.** `echo .env | xargs cat`, `xargs cat <<< .env`,
  `parallel cat`: the files are named by the input, which no rule can read here.
- **Glob options.** `shopt -s dotglob; cat *` (or `GLOBIGNORE=x`, `bash -O dotglob`)
  makes `*` match `.env`; `nocaseglob`, `extglob` and `globstar` change what a pattern
  matches too. The patterns are expanded here as bash does by default, so a command that
  changes that is not a plain read.
- **Patterns Python's glob reads differently.** bash takes `[^x]` as `[!x]` and knows
  `[[:alpha:]]`; Python's glob takes both literally, so `cat .[^x]nv` would look like a
  read of a missing file. `[^` is read as `[!`, and a POSIX class makes the word unknown.
- **Tildes bash knows and Python does not.** `~+` is the current folder (`cat ~+/.env`),
  `~-` the previous one, `~N`/`~+N`/`~-N` the folder stack: `~+` is resolved here, the
  others are only known when the command runs.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_server.fs.hardlinks import names_of_many
from lsp_server.policy.commands.wrappers import command_forms, program_name

if TYPE_CHECKING:
    from lsp_server.policy.commands.command_paths import Places
    from lsp_server.shellparse.segments import Segment

# Programs that take the names of files to read from their input.
NAMES_FROM_INPUT = frozenset(("xargs", "parallel", "sem"))
# Programs whose arguments name no file (what xargs hands them is harmless).
_PRINTS_ARGUMENTS = frozenset(("echo", "printf", "true", "false"))
_GLOB_OPTIONS = re.compile(r"dotglob|nocaseglob|extglob|globstar|GLOBIGNORE")
_POSIX_CLASS = re.compile(r"\[[^\]]*\[[:=.]")
_FOLDER_TILDE = re.compile(r"~([+-]?)(\d*)(?=/|$)")


def names_from_input(segment: Segment) -> str | None:
    """Why the files this command reads come from its input (xargs, parallel), or None."""
    if not segment.words:
        return None
    forms = command_forms(segment.words)
    for index, form in enumerate(forms):
        head = program_name(form[0])
        if head not in NAMES_FROM_INPUT:
            continue
        # The next form is what xargs runs with its options peeled (`xargs -n 1 cat`);
        # without one it runs echo. parallel's options are not peeled: take its first word.
        following = forms[index + 1 : index + 2]
        if head == "xargs":
            runs = program_name(following[0][0]) if following else "echo"
        else:
            runs = next((program_name(w) for w in form[1:] if not w.startswith("-")), "echo")
        if runs not in _PRINTS_ARGUMENTS:
            return (
                f"{head} hands its input to {runs} as arguments: which files it reads is "
                "only known when it runs"
            )
    return None


def glob_options(segment: Segment) -> str | None:
    """Why this command changes how bash expands patterns (shopt, GLOBIGNORE), or None."""
    for word in segment.words:
        found = _GLOB_OPTIONS.search(word)
        if found is not None:
            return (
                f"it changes how bash expands patterns ({found.group(0)}), so what `*` "
                "matches cannot be told here"
            )
    return None


def bash_pattern(word: str) -> str | None:
    """`word` as Python's glob should read it (`[^x]` -> `[!x]`); None when it holds a
    bracket expression that glob cannot read (`[[:alpha:]]`, `[[=e=]]`)."""
    if _POSIX_CLASS.search(word):
        return None
    return word.replace("[^", "[!")


def folder_tilde(word: str, cwd: Path) -> tuple[str, str | None]:
    """(`word` with a leading `~+` replaced by `cwd`, why it cannot be resolved or None)."""
    found = _FOLDER_TILDE.match(word)
    if found is None or found.group(0) == "~":
        return word, None
    if found.group(0) in ("~+", "~+0", "~0"):
        return str(cwd) + word[found.end() :], None
    return word, f"{found.group(0)} names a folder only known when the command runs"


def _root_of(real: Path, places: Places) -> Path | None:
    bases = sorted((*places.roots, *places.readable), key=lambda p: len(p.parts), reverse=True)
    return next((b for b in bases if real == b or real.is_relative_to(b)), None)


def linked(paths: Iterable[Path]) -> list[tuple[Path, os.stat_result]]:
    """The regular files among `paths` that have more than one name (links followed)."""
    found: list[tuple[Path, os.stat_result]] = []
    for path in paths:
        try:
            st = path.stat()
        except (OSError, ValueError):
            continue
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            found.append((path, st))
    return found


def link_concern(files: Sequence[tuple[Path, os.stat_result]], places: Places) -> str | None:
    """Why reading these hard-linked files is not a plain read: one of their names is a
    secret, or not all their names are inside the workspace (a scan of each root, bounded
    as read_file's; a scan that stops early counts as names outside)."""
    by_root: dict[Path, list[tuple[Path, os.stat_result]]] = {}
    for found_at, st in files:
        path = Path(os.path.realpath(found_at))
        root = _root_of(path, places)
        if root is None:
            return f"{path} is outside the workspace"
        by_root.setdefault(root, []).append((path, st))
    for root, group in by_root.items():
        names = names_of_many(root, [st for _, st in group])
        for path, st in group:
            found = None if names is None else names[(st.st_dev, st.st_ino)]
            if found is None or len(found) < st.st_nlink:
                return (
                    f"{path} is a hard link with names outside the workspace (it may be a "
                    "file from elsewhere)"
                )
            secret = next((n for n in found if places.is_secret(n)), None)
            if secret is not None:
                return f"{path} is another name (hard link) of {secret}, which looks like a secret"
    return None
