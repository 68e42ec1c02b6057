"""A small classifier of plainly read-only shell commands.

A command line counts as a read when it is not opaque (no substitutions, here-docs ...),
and every simple command in it

- redirects output to no file (`2>&1` and `/dev/null` are fine),
- starts with a bare program name (no `./x`, `/tmp/x`, no `VAR=value` prefix, no `$X`),
- is in the table below, and passes that program's check for writing flags
  (`sed -i`, `find -delete`, `sort -o`, `git branch -D`, `rg --pre` ...; long options in
  any abbreviation the program accepts, see options.py), and `-v` on printf/test/[
  (bash evaluates the variable's subscript, which can run commands);

or is covered by one of the configured extra read-only specs (`policy.read_only_commands`,
written like bash rule specs: `"make -n"`, `"cargo tree:*"`).
Anything unknown is not a read: the policy then asks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from lsp_server.policy.commands.command_paths import Places, read_concern
from lsp_server.policy.commands.git_guard import GitConfigGuard
from lsp_server.policy.commands.options import option_hazard
from lsp_server.policy.commands.shell_words import ParsedCommand, Segment
from lsp_server.policy.rules import Rule, RuleError, parse_rule

Check = Callable[[Sequence[str]], bool]


def _always(args: Sequence[str]) -> bool:
    return True


# sed is a read only for the common printing and substituting scripts; `w`, `e` and `r`
# commands (write, execute, read-in) and in-place editing are not.
_SED_SCRIPT = re.compile(
    r"(?:\d+(?:,\d+|,\$)?|\$|/[^/]*/)?\s*[pdq]"  # 5p, 1,10p, $p, /re/d, q
    r"|s(?P<d>[/|#,:])(?:(?!(?P=d)).)*(?P=d)(?:(?!(?P=d)).)*(?P=d)[gpiI0-9]*"  # s/a/b/g
)


def _sed(args: Sequence[str]) -> bool:
    scripts: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("-e", "--expression"):
            if index + 1 >= len(args):
                return False
            scripts.append(args[index + 1])
            index += 2
            continue
        if arg.startswith("-"):
            if arg.startswith("--in-place") or arg.startswith(("-f", "--file")):
                return False
            if not arg.startswith("--") and ("i" in arg[1:] or "f" in arg[1:]):
                return False
            if arg not in (
                "-n",
                "--quiet",
                "--silent",
                "-E",
                "-r",
                "--regexp-extended",
                "-s",
                "-u",
                "-z",
            ):
                return False
        elif not scripts:
            scripts.append(arg)
        index += 1
    return bool(scripts) and all(_sed_script_is_read(s) for s in scripts)


def _sed_script_is_read(script: str) -> bool:
    parts = [p.strip() for p in re.split(r"[;\n]", script) if p.strip()]
    return bool(parts) and all(_SED_SCRIPT.fullmatch(p) for p in parts)


def _positional(args: Sequence[str]) -> list[str]:
    return [a for a in args if not a.startswith("-")]


def _git_branch(args: Sequence[str]) -> bool:
    # A bare name creates a branch; names are only patterns after --list/-l.
    return not _positional(args) or any(a in ("-l", "--list") for a in args)


def _git_listing_only(*reading_words: str, bare_reads: bool = True) -> Check:
    """`git tag`, `git remote`, `git stash` ...: reads with no words (unless bare_reads is
    False: a bare `git stash` stashes), or with a reading subcommand."""

    def check(args: Sequence[str]) -> bool:
        positional = _positional(args)
        if not positional:
            return bare_reads and all(a in ("-v", "--verbose", "-l", "--list", "-n") for a in args)
        return positional[0] in reading_words

    return check


def _git_config(args: Sequence[str]) -> bool:
    return any(a in ("--get", "--get-all", "--get-regexp", "--list", "-l") for a in args) or (
        len(args) >= 1 and args[0] in ("get", "list")
    )


_GIT_SUBCOMMANDS: dict[str, Check] = {
    "status": _always,
    "diff": _always,
    "log": _always,
    "show": _always,
    "shortlog": _always,
    "blame": _always,
    "rev-parse": _always,
    "rev-list": _always,
    "ls-files": _always,
    "ls-tree": _always,
    "cat-file": _always,
    "describe": _always,
    "grep": _always,
    "branch": _git_branch,
    "tag": _git_listing_only(),
    "remote": _git_listing_only("show", "get-url"),
    "stash": _git_listing_only("list", "show", bare_reads=False),
    "worktree": _git_listing_only("list"),
    "reflog": _git_listing_only("show"),
    "config": _git_config,
    "merge-base": _always,
    "show-ref": _always,
}


def _git(args: Sequence[str]) -> bool:
    index = 0
    # Global options: `-c` could set an alias or a pager, so it is not a read.
    while index < len(args) and args[index].startswith("-"):
        if args[index] == "-C" and index + 1 < len(args):
            index += 2
        elif args[index] in ("--no-pager", "--no-optional-locks", "-P"):
            index += 1
        else:
            return False
    if index >= len(args):
        return False
    check = _GIT_SUBCOMMANDS.get(args[index])
    return check is not None and check(args[index + 1 :])


DEFAULT_READ_ONLY_PROGRAMS: dict[str, Check] = {
    **{
        name: _always
        for name in (
            "ls",
            "cat",
            "head",
            "tail",
            "wc",
            "pwd",
            "echo",
            "printf",
            "grep",
            "egrep",
            "fgrep",
            "which",
            "type",
            "file",
            "stat",
            "du",
            "df",
            "diff",
            "cmp",
            "basename",
            "dirname",
            "realpath",
            "readlink",
            "whoami",
            "id",
            "uname",
            "true",
            "false",
            "test",
            "[",
            "cut",
            "tr",
            "nl",
            "od",
            "hexdump",
            "jq",
            "column",
            "ps",
            "printenv",
            "nproc",
            "free",
            "uptime",
            "seq",
            "sha256sum",
            "sha1sum",
            "md5sum",
            "cksum",
            "comm",
            "rev",
            "fold",
        )
    },
    "rg": _always,
    "sort": _always,
    "tree": _always,
    "date": _always,
    "find": _always,
    "sed": _sed,
    "git": _git,
}


class ReadOnlyClassifier:
    """Decides whether a parsed command line only reads. Configurable with extra specs.

    With `places` (the workspace roots and secret patterns) and the folder the command runs
    in, a read of a secret file or of anything outside the workspace is not a plain read,
    nor is a git command in a repository whose config names programs (git_guard.py)."""

    def __init__(
        self,
        extra_specs: Iterable[str] = (),
        problems: list[str] | None = None,
        places: Places | None = None,
    ) -> None:
        self.places = places
        self.git_guard = GitConfigGuard()
        self.extra: list[Rule] = []
        for spec in extra_specs:
            try:
                self.extra.append(parse_rule(f"bash({spec})"))
            except RuleError as exc:
                if problems is not None:
                    problems.append(f"policy.read_only_commands: {exc}; entry ignored")

    def segment_is_read(self, segment: Segment, cwd: Path | None = None) -> bool:
        return self.segment_concern(segment, cwd) is None

    def segment_concern(self, segment: Segment, cwd: Path | None = None) -> str | None:
        """Why this simple command is not a plain read; None when it is one."""
        if not segment.words:
            return "an empty command"
        if segment.writes_files:
            return "it redirects output into a file"
        if any(rule.matches_segment(segment) for rule in self.extra):
            return self.segment_place_concern(segment, cwd)
        program, args = segment.words[0], segment.words[1:]
        if "/" in program or "=" in program or "$" in program:
            return f"{program} is not a known read-only program"
        check = DEFAULT_READ_ONLY_PROGRAMS.get(program)
        if check is None or not check(args):
            return f"{' '.join(segment.words[:2])} is not a known read-only command"
        hazard = option_hazard(segment.words)
        if hazard is not None and program in ("printf", "test", "["):
            return f"{program} {hazard} names a variable whose subscript bash evaluates as code"
        if hazard is not None:
            command = " ".join(w for w in segment.words[:2] if not w.startswith("-"))
            return f"{command} {hazard} writes a file or runs a program"
        return self.segment_place_concern(segment, cwd)

    def segment_place_concern(self, segment: Segment, cwd: Path | None) -> str | None:
        """What this simple command reads that needs a person's eye (a secret, a file
        outside the workspace), or a git config that names programs; None otherwise."""
        if self.places is None or cwd is None:
            return None
        concern = read_concern(segment, cwd, self.places)
        if concern is None and segment.words[0] == "git":
            concern = self.git_guard.concern(cwd, segment.words[1:])
        return concern

    def concern(self, parsed: ParsedCommand, cwd: Path | None = None) -> str | None:
        """Why the command line is not a plain read; None when every part only reads."""
        if parsed.opaque:
            return f"it runs code its words do not show ({parsed.reasons[0]})"
        if not parsed.segments:
            return "an empty command"
        for segment in parsed.segments:
            concern = self.segment_concern(segment, cwd)
            if concern is not None:
                return concern
        return None

    def place_concern(self, parsed: ParsedCommand, cwd: Path | None) -> str | None:
        """Why a command of read-only programs is still not a plain read (what it reads,
        or the repository's git config); None otherwise. For the approval prompt."""
        for segment in parsed.segments:
            if self.segment_concern(segment) is None:
                concern = self.segment_place_concern(segment, cwd)
                if concern is not None:
                    return concern
        return None

    def is_read(self, parsed: ParsedCommand, cwd: Path | None = None) -> bool:
        return self.concern(parsed, cwd) is None
