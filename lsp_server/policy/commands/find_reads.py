"""find's expression as a read: every test and action in it is one that only prints."""

from __future__ import annotations

import re
from collections.abc import Sequence

from lsp_server.policy.commands.option_shapes import names

# find: what may follow the starting points. Tests and actions that only print to stdout.
_FIND_FLAGS = names(
    "-empty -executable -false -true -readable -writable -nouser -nogroup -xdev -mount -depth"
    " -d -noleaf -ignore_readdir_race -noignore_readdir_race -prune -print -print0 -ls -quit"
    " -daystart -follow -not ! ( ) -a -and -o -or , -nowarn -warn"
)
_FIND_VALUED = names(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -type"
    " -xtype -maxdepth -mindepth -size -mtime -mmin -atime -amin -ctime -cmin -newer -anewer"
    " -cnewer -used -user -group -uid -gid -perm -links -inum -samefile -regextype -fstype"
    " -printf -context"
)
_FIND_NEWER = re.compile(r"-newer[acmB][acmBt]")


def find_concern(args: Sequence[str]) -> str | None:
    """find [-H|-L|-P] [-D x] [-Olevel] [--] [starting points] [expression]: every part of
    the expression (after `--` too: find reads it there) is an allow-listed test."""
    index = 0
    while (index < len(args) and args[index] in ("-H", "-L", "-P", "-D")) or (
        index < len(args) and args[index].startswith("-O") and args[index][2:].isdigit()
    ):
        index += 2 if args[index] == "-D" else 1
    if index < len(args) and args[index] == "--":
        index += 1
    while index < len(args) and not args[index].startswith("-") and args[index] not in "!()":
        index += 1  # starting points
    while index < len(args):
        word = args[index]
        if word in _FIND_FLAGS:
            index += 1
        elif word in _FIND_VALUED or _FIND_NEWER.fullmatch(word):
            if index + 1 >= len(args):
                return f"find {word} without its value"
            index += 2
        else:
            return f"find {word} is not known to keep find read-only"
    return None
