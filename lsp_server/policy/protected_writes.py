"""Whether a call could change a file that makes other programs run code (sandbox/
protected.py: .toolhost.toml, .git, .vscode/, .envrc ...), and what that file controls.

Such a call always asks, whatever the mode and the allow rules (guards.py). A writer's
paths are exact. A shell command is judged by its words: any word or output redirection
that names a protected path; and, when it runs outside the sandbox (which would otherwise
stop it), what the words cannot show: a computed output file (`n=.toolhost.toml; ... >
$n`), inline code that mentions a protected name (`python3 -c "open('.envrc','w')"`), and
git subcommands that create or configure a repository (`git init`, `git config ...`).
A sandboxed command asks only for what the sandbox does not hold read-only itself (a
missing name below the top of a root, such as `sub/.envrc`).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from pathlib import Path

from lsp_server.policy.commands.command_paths import Places, expand_word, real_path
from lsp_server.policy.commands.options import git_subcommand
from lsp_server.policy.commands.wrappers import command_forms, program_name
from lsp_server.sandbox.protected import BUILT_IN
from lsp_server.shellparse.segments import Segment

# Programs whose file arguments they create, replace or move.
_WRITERS = frozenset(
    (
        "touch", "cp", "install", "tee", "dd", "truncate", "ln", "mkfifo", "mknod", "rsync",
        "mv", "rename", "mkdir", "sed", "perl", "patch", "unzip", "tar", "curl", "wget",
    )
)  # fmt: skip
# git subcommands that create a repository or change its configuration.
_GIT_CREATES = frozenset(("init", "clone", "worktree", "submodule"))
_GIT_CONFIG_READS = frozenset(
    (
        "--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--list",
        "get", "list", "--show-origin", "--show-scope", "--name-only", "--get-color",
        "--get-colorbool",
    )
)  # fmt: skip


_CHANGES_FOLDER = frozenset(("cd", "pushd", "popd"))
_GIT_CONTROLS = next(e.controls for e in BUILT_IN if e.pattern == ".git")


def _option_value(word: str) -> str:
    """`--file=x` -> x (options name files too); other words as they are."""
    if word.startswith("-") and "=" in word:
        return word.split("=", 1)[1]
    return word


def _computed(word: str) -> bool:
    return "$" in word or "`" in word


def _name_pattern(places: Places) -> re.Pattern[str]:
    """A protected name standing as a path component inside any text (`'.envrc'`,
    `=.git`, `sub/.vscode/x`), not as part of a longer name (`x.git`, `.gitignore`)."""
    return _compiled(places.protected_paths.names())


@functools.lru_cache(maxsize=8)
def _compiled(names: tuple[str, ...]) -> re.Pattern[str]:
    ordered = sorted({n for n in names if n}, key=len, reverse=True)
    body = "|".join(re.escape(n) for n in ordered) or "(?!)"
    return re.compile(rf"(?<![\w.-])({body})(?![\w.-])")


# `git config` options that choose where or how, before the action; those with a value.
_GIT_CONFIG_WHERE = frozenset(
    (
        "--global", "--system", "--local", "--worktree", "--includes", "--no-includes",
        "--show-origin", "--show-scope", "-z", "--null", "--name-only",
    )
)  # fmt: skip
_GIT_CONFIG_VALUED = frozenset(("--file", "-f", "--blob", "--type", "--default"))


def _config_reads(args: Sequence[str]) -> bool:
    """`git config` only reads: its first word past the scope options is a read action
    (`--get`, `--list`, `get` ...). git stops at the key: `git config k v --get` sets."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in _GIT_CONFIG_VALUED:
            index += 2
        elif arg in _GIT_CONFIG_WHERE or arg.split("=", 1)[0] in _GIT_CONFIG_VALUED:
            index += 1
        else:
            return arg in _GIT_CONFIG_READS
    return True  # `git config` alone prints its usage


def _git_reason(words: Sequence[str]) -> str | None:
    for form in command_forms(tuple(words)):
        if program_name(form[0]) != "git":
            continue
        found = git_subcommand(form[1:])
        if found is None:
            continue
        name, args = found
        if "--help" in args or "-h" in args:
            return None
        if name in _GIT_CREATES:
            return f"git {name} creates a repository: {_GIT_CONTROLS}"
        if name == "config" and not _config_reads(args):
            return f"git config changes a repository's config: {_GIT_CONTROLS}"
    return None


class ProtectedWrites:
    """The judgement for one call, over `places` (the roots and the protected list)."""

    def __init__(self, places: Places) -> None:
        self.places = places

    def _shown(self, real: Path) -> str:
        for root in self.places.roots:
            if real == root or real.is_relative_to(root):
                return real.relative_to(root).as_posix() or "."
        return str(real)

    def path_reason(self, real: Path, verb: str = "writes") -> str | None:
        what = self.places.protection(real)
        return f"it {verb} {self._shown(real)}: {what}" if what else None

    def command_reason(self, segments: Sequence[Segment], cwd: Path, sandboxed: bool) -> str | None:
        """Why this command (not a plain read) could change a protected file, or None."""
        names = None if sandboxed else _name_pattern(self.places)
        # After a `cd` the folder a later part runs in is not `cwd`: not known to be a root.
        moved = any(s.words and s.words[0] in _CHANGES_FOLDER for s in segments)
        for segment in segments:
            reason = self._segment_reason(segment, cwd, sandboxed, names, moved)
            if reason is not None:
                return reason
        return None

    def _segment_reason(
        self,
        segment: Segment,
        cwd: Path,
        sandboxed: bool,
        names: re.Pattern[str] | None,
        moved: bool = False,
    ) -> str | None:
        words = segment.words
        program = program_name(words[0]) if words else ""
        targets = [(r.target, False, True) for r in segment.redirects if r.writes]
        targets += [
            (_option_value(word), index in segment.patterned, program in _WRITERS)
            for index, word in enumerate(words[1:], start=1)
            if not word.startswith("-") or "=" in word
        ]
        for value, patterned, written in targets:
            if _computed(value):
                if "toolhost" in value:
                    return f"{value!r} may name a toolhost policy file"
                if written and not sandboxed:
                    return (
                        f"the file it writes ({value}) is only known when the command runs, "
                        "and may be one that makes programs run code (.toolhost.toml, .envrc ...)"
                    )
                continue
            for candidate in expand_word(value, cwd, patterned):
                real = real_path(candidate, cwd)
                if sandboxed and self.places.held_by_sandbox(real):
                    continue  # read-only in the sandbox whether or not it exists
                what = self.places.protection(real)
                if what:
                    return f"it names {self._shown(real)}: {what}"
        if _approves_a_config(words):
            return "`toolhost trust` approves a workspace config: it changes your policy"
        if names is not None:
            for word in words:
                found = names.search(word)
                if found is not None:
                    what = self.places.protection(cwd / found.group(1)) or "a protected file"
                    return f"its words name {found.group(1)}: {what}"
        if not sandboxed or _creates_nested_repository(words, cwd, self.places, moved):
            return _git_reason(words) if words else None
        return None


def _approves_a_config(words: Sequence[str]) -> bool:
    """`toolhost trust ...` (or `python -m lsp_server trust`): the user's own approval of a
    .toolhost.toml, never the agent's, even where its words name no protected file."""
    for form in command_forms(tuple(words)):
        rest = list(form[1:])
        if program_name(form[0]).startswith("python") and rest[:2] in (
            ["-m", "lsp_server"],
            ["-m", "lsp_server.cli"],
        ):
            rest = rest[2:]
        elif program_name(form[0]) != "toolhost":
            continue
        if rest[:1] == ["trust"]:
            return True
    return False


def creates_repository(words: Sequence[str]) -> bool:
    """`git init` / `git clone` (through wrappers): a call that always asks the user."""
    reason = _git_reason(words)
    return reason is not None and "creates a repository" in reason


def _creates_nested_repository(
    words: Sequence[str], cwd: Path, places: Places, moved: bool = False
) -> bool:
    """A sandboxed `git init` / `git clone` that makes a repository the sandbox does not
    hold: anywhere but at the top of a root (there the `.git` placeholder stops it)."""
    reason = _git_reason(words)
    if reason is None or "creates a repository" not in reason:
        return False
    at_root = not moved and Path(os.path.realpath(cwd)) in places.roots
    operands = [w for w in words[2:] if not w.startswith("-")]
    return not at_root or bool(operands)


def protected_write_reason(
    writes: Sequence[Path],
    shell: tuple[Sequence[Segment], Path, bool] | None,
    places: Places,
) -> str | None:
    """Why a call could change a protected file: a writer's real paths, or a shell
    command's segments, the folder it runs in and whether it runs in the sandbox."""
    judge = ProtectedWrites(places)
    reason = next((r for path in writes if (r := judge.path_reason(path)) is not None), None)
    if reason is None and shell is not None:
        reason = judge.command_reason(*shell)
    if reason is None:
        return None
    return f"{reason}; a change to such a file always asks"
