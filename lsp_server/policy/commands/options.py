"""Recognising command-line options the way the programs themselves parse them.

GNU getopt_long and git's parse-options accept any unambiguous prefix of a long option
(`sort --out=f` is `--output=f`, `git grep --open=sh` is `--open-files-in-pager=sh`), and
short options combine (`-nO`). A check that compares whole words misses both, so every
option test here treats `--<prefix>` of a listed long option as that option. An ambiguous
prefix makes the program fail, so counting it as the dangerous option costs nothing.

`option_hazard()` names the options of common read-only programs that write files or run
other programs; the read-only classifier refuses them, and a `prefix:*` allow rule never
covers a command that uses one (`bash(git log:*)` does not approve `git log --output=f`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs


def long_name(arg: str) -> str | None:
    """`--out=f` -> `out`; None for anything that is not a long option (or `--` itself)."""
    if not arg.startswith("--") or arg == "--":
        return None
    return arg[2:].split("=", 1)[0]


def abbreviates(arg: str, option: str) -> bool:
    """Whether `arg` (`--set-upstream-t=x`) is `option` (`--set-upstream-to`) or a prefix
    of it that the program would accept."""
    name = long_name(arg)
    return bool(name) and option[2:].startswith(name or "")


@attrs.frozen
class OptionSet:
    """Options that make a command more than a read: short letters and long names."""

    short: frozenset[str] = frozenset()
    """Single letters (`o` for `-o`, also found inside `-no` and `-ofile`)."""
    long: tuple[str, ...] = ()
    """Full long names with dashes (`--output`); any accepted prefix matches."""
    words: frozenset[str] = frozenset()
    """Single-dash words compared whole (`-delete` for find)."""

    def found_in(self, args: Sequence[str]) -> str | None:
        """The first argument that uses one of the options, or None."""
        for arg in args:
            if arg == "--":
                return None
            if arg in self.words:
                return arg
            if arg.startswith("--"):
                if any(abbreviates(arg, option) for option in self.long):
                    return arg
            elif arg.startswith("-") and len(arg) > 1 and self.short & set(arg[1:]):
                return arg
        return None


def options(*flags: str, words: Iterable[str] = ()) -> OptionSet:
    return OptionSet(
        short=frozenset(f[1] for f in flags if len(f) == 2 and f[0] == "-" and f[1] != "-"),
        long=tuple(f for f in flags if f.startswith("--")),
        words=frozenset(words),
    )


# Options that write a file or run another program, per program (and git subcommand).
PROGRAM_HAZARDS: dict[str, OptionSet] = {
    "sort": options("-o", "--output", "--compress-program"),
    "tree": options("-o", "-R"),
    "date": options("-s", "--set"),
    "file": options("-C", "--compile"),
    "rg": options("--pre"),
    "printf": options("-v"),
    "test": options(words=("-v", "-R")),
    "[": options(words=("-v", "-R")),
    "find": options(
        words=(
            "-delete",
            "-exec",
            "-execdir",
            "-ok",
            "-okdir",
            "-fprint",
            "-fprint0",
            "-fprintf",
            "-fls",
        )
    ),
}
_GIT_OUTPUT = options("--output", "--ext-diff", "--textconv")
GIT_HAZARDS: dict[str, OptionSet] = {
    "diff": _GIT_OUTPUT,
    "log": _GIT_OUTPUT,
    "show": _GIT_OUTPUT,
    "whatchanged": _GIT_OUTPUT,
    "grep": options("-O", "--open-files-in-pager", "--textconv", "--ext-grep"),
    "cat-file": options("--filters", "--textconv"),
    "blame": options("--textconv"),
    "branch": options(
        "-d",
        "-D",
        "-m",
        "-M",
        "-c",
        "-C",
        "-f",
        "-u",
        "-t",
        "--delete",
        "--move",
        "--copy",
        "--force",
        "--set-upstream-to",
        "--set-upstream",
        "--unset-upstream",
        "--edit-description",
        "--track",
        "--create-reflog",
    ),
}


def git_subcommand(args: Sequence[str]) -> tuple[str, Sequence[str]] | None:
    """`git -C x --no-pager log -p` -> ("log", ["-p"]); None when it cannot tell."""
    index = 0
    while index < len(args) and args[index].startswith("-"):
        index += 2 if args[index] in ("-C", "-c") else 1
    if index >= len(args):
        return None
    return args[index], args[index + 1 :]


def option_hazard(words: Sequence[str]) -> str | None:
    """The first argument of `words` (one simple command, program first) that makes a
    read-only program write a file or run a program; None when there is none."""
    if not words:
        return None
    program, args = words[0], words[1:]
    if program == "git":
        found = git_subcommand(args)
        if found is None:
            return None
        subcommand, rest = found
        hazard = GIT_HAZARDS.get(subcommand)
        return hazard.found_in(rest) if hazard else None
    hazard = PROGRAM_HAZARDS.get(program)
    return hazard.found_in(args) if hazard else None
