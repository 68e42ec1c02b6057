"""A small classifier of plainly read-only shell commands.

A command line counts as a read when it is not opaque (no substitutions, here-docs ...),
and every simple command in it

- redirects output to no file (`2>&1` and `/dev/null` are fine),
- starts with a bare program name (no `./x`, `/tmp/x`, no `VAR=value` prefix, no `$X`),
- is in the table below, and passes that program's check for writing flags
  (`sed -i`, `find -delete`, `sort -o`, `git branch -D`, `rg --pre` ...);

or is covered by one of the configured extra read-only specs (`policy.read_only_commands`,
written like bash rule specs: `"make -n"`, `"cargo tree:*"`).
Anything unknown is not a read: the policy then asks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from lsp_server.policy.rules import Rule, RuleError, parse_rule
from lsp_server.policy.shell_words import ParsedCommand, Segment

Check = Callable[[Sequence[str]], bool]


def _no_flags(*flags: str) -> Check:
    """Refuse the listed flags, also in `--flag=value` and combined `-xyz` short forms."""
    long_flags = tuple(f for f in flags if f.startswith("--"))
    short_flags = {f[1] for f in flags if len(f) == 2 and f.startswith("-")}
    single_dash_words = {
        f for f in flags if f.startswith("-") and not f.startswith("--") and len(f) > 2
    }

    def check(args: Sequence[str]) -> bool:
        for arg in args:
            if arg == "--":
                break
            if arg in single_dash_words:
                return False
            if arg.startswith("--"):
                if any(arg == f or arg.startswith(f + "=") for f in long_flags):
                    return False
            elif arg.startswith("-") and short_flags & set(arg[1:]):
                return False
        return True

    return check


def _always(args: Sequence[str]) -> bool:
    return True


def _find(args: Sequence[str]) -> bool:
    writers = {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0"}
    writers |= {"-fprintf", "-fls"}
    return not any(arg in writers for arg in args)


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


_GIT_BRANCH_WRITERS = _no_flags(
    "-d",
    "-D",
    "-m",
    "-M",
    "-c",
    "-C",
    "-f",
    "-u",
    "--delete",
    "--move",
    "--copy",
    "--force",
    "--set-upstream-to",
    "--unset-upstream",
    "--edit-description",
    "--track",
    "--no-track",
)
_GIT_OUTPUT = _no_flags("--output", "--ext-diff", "--textconv")


def _positional(args: Sequence[str]) -> list[str]:
    return [a for a in args if not a.startswith("-")]


def _git_branch(args: Sequence[str]) -> bool:
    if not _GIT_BRANCH_WRITERS(args):
        return False
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
    "diff": _GIT_OUTPUT,
    "log": _GIT_OUTPUT,
    "show": _GIT_OUTPUT,
    "shortlog": _always,
    "blame": _always,
    "rev-parse": _always,
    "rev-list": _always,
    "ls-files": _always,
    "ls-tree": _always,
    "cat-file": _always,
    "describe": _always,
    "grep": _no_flags("-O", "--open-files-in-pager"),
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
    "rg": _no_flags("--pre"),
    "sort": _no_flags("-o", "--output"),
    "tree": _no_flags("-o"),
    "date": _no_flags("-s", "--set"),
    "find": _find,
    "sed": _sed,
    "git": _git,
}


class ReadOnlyClassifier:
    """Decides whether a parsed command line only reads. Configurable with extra specs."""

    def __init__(self, extra_specs: Iterable[str] = (), problems: list[str] | None = None) -> None:
        self.extra: list[Rule] = []
        for spec in extra_specs:
            try:
                self.extra.append(parse_rule(f"bash({spec})"))
            except RuleError as exc:
                if problems is not None:
                    problems.append(f"policy.read_only_commands: {exc}; entry ignored")

    def segment_is_read(self, segment: Segment) -> bool:
        if segment.writes_files or not segment.words:
            return False
        if any(rule.matches_segment(segment) for rule in self.extra):
            return True
        program, args = segment.words[0], segment.words[1:]
        if "/" in program or "=" in program or "$" in program:
            return False
        check = DEFAULT_READ_ONLY_PROGRAMS.get(program)
        return check is not None and check(args)

    def is_read(self, parsed: ParsedCommand) -> bool:
        if parsed.opaque or not parsed.segments:
            return False
        return all(self.segment_is_read(segment) for segment in parsed.segments)
