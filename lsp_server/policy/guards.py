"""Calls that must ask whatever the mode and the allow rules say.

1. A write to a file that makes other programs run code or sets policy (`.toolhost.toml`,
   `.git`, `.vscode/`, `.envrc` ...: sandbox/protected.py; the user config, the trust
   store): an agent that could edit them could run code outside any sandbox or grant
   itself every permission, so such a write always asks (acceptEdits and bypass included),
   says what the file controls, is rated high risk and is never remembered
   (protected_writes.py).
2. A shell command that a deny rule could match but toolhost cannot see through: it is
   opaque (`$(echo touch) f`, `python -c ...`, `... | sh`; wrappers.py), or it runs a
   program that does the same job as a denied one (`cp /dev/null f` or `> f` when
   `touch` is denied, families below). Deny rules name programs; these ask instead of
   letting bypass mode wave them through.
3. A recursive delete of a folder that holds a workspace root (`rm -rf /`, `rm -r ..`):
   it would erase the whole workspace (the sandbox keeps it from the rest), so it asks in
   every mode and no rule is offered to remember it.
4. A git command that would discard uncommitted changes (`git stash`, `git checkout -- .`,
   `git restore`, `git reset --hard`, `git clean -f`, switching branches): in a workspace
   several agents share it can drop another session's work, so it asks in every mode and
   names whose changes in which files it would drop (commands/git_discards.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_server.policy.commands.command_paths import Places
from lsp_server.policy.commands.denied_names import names_program_unseen
from lsp_server.policy.commands.git_discards import discard_reason
from lsp_server.policy.commands.wrappers import command_forms, program_name
from lsp_server.policy.protected_writes import protected_write_reason
from lsp_server.policy.rules import Rule
from lsp_server.shellparse.segments import Segment

if TYPE_CHECKING:
    from lsp_server.runtime.sessions.activity import WorkspaceActivity

# Programs that do one another's job: a deny rule on one makes the others ask.
FAMILIES: tuple[frozenset[str], ...] = (
    frozenset(
        ("touch", "cp", "install", "tee", "dd", "truncate", "ln", "mkfifo", "mknod", "rsync")
    ),
    frozenset(("rm", "unlink", "shred")),
    frozenset(("mv", "rename")),
    frozenset(("curl", "wget", "aria2c", "fetch")),
    frozenset(("chmod", "chown", "chgrp", "setfacl")),
)
# In the file-creating family, an output redirection (`> f`) does the same as `touch f`.
_CREATES = FAMILIES[0]


def _family(program: str) -> frozenset[str]:
    return next((f for f in FAMILIES if program in f), frozenset())


def _denied_programs(deny: Iterable[Rule], tool: str, kind: str) -> dict[str, Rule]:
    """The first word of each shell deny rule that names this tool."""
    found: dict[str, Rule] = {}
    for rule in deny:
        if rule.spec is None or not rule.names_tool(tool, kind, False):
            continue
        words = rule.prefix or rule.words
        if words:
            found.setdefault(program_name(words[0]), rule)
    return found


def deny_could_match(
    deny: Sequence[Rule],
    tool: str,
    kind: str,
    segments: Sequence[Segment],
    opaque: Sequence[str],
) -> str | None:
    """Why a shell deny rule could apply to this command line although none matched."""
    denied = _denied_programs(deny, tool, kind)
    if not denied:
        return None
    if opaque:
        rule = next(iter(denied.values()))
        return (
            f"toolhost cannot see what it runs ({opaque[0]}), and a deny rule such as "
            f"{rule.text} could apply"
        )
    for segment in segments:
        for form in command_forms(segment.words) if segment.words else [()]:
            program = program_name(form[0]) if form else ""
            for name, rule in denied.items():
                family = _family(name)
                if program != name and program in family:
                    return f"{program} can do what the deny rule {rule.text} forbids"
                if family is _CREATES and segment.writes_files:
                    return f"the output redirection creates a file, which {rule.text} forbids"
        for name, rule in denied.items():
            if segment.words and names_program_unseen(segment.words, name):
                given = segment.words[0]
                return f"{given} is given {name} and may run it, which {rule.text} forbids"
    return None


def policy_file_reason(
    writes: Sequence[Path],
    shell: tuple[Sequence[Segment], Path, bool] | None,
    places: Places,
) -> str | None:
    """Why a call could change a protected file (policy, or one that makes programs run
    code): a writer's real paths, or the segments of a shell command that is not a plain
    read, the folder it runs in and whether it runs in the sandbox."""
    return protected_write_reason(writes, shell, places)


_RECURSIVE = ("-r", "-R", "--recursive")


def _recursive_rm(words: Sequence[str]) -> list[str] | None:
    """The targets of `rm` with a recursive option (`rm -rf /` -> ["/"]); None otherwise."""
    if not words or program_name(words[0]) != "rm":
        return None
    recursive, targets, options = False, [], True
    for word in words[1:]:
        if options and word == "--":
            options = False
        elif options and word.startswith("--"):
            recursive = recursive or word == "--recursive"
        elif options and word.startswith("-") and word != "-":
            recursive = recursive or "r" in word or "R" in word
        else:
            targets.append(word)
    return targets if recursive else None


def root_deletion(
    segments: Sequence[Segment], cwd: Path, roots: Sequence[Path], sandboxed: bool
) -> str | None:
    """Why a command would delete a whole workspace: `rm -r` of a root's parent (or `/`)."""
    for segment in segments:
        for form in command_forms(segment.words) if segment.words else []:
            for target in _recursive_rm(form) or []:
                real = Path(os.path.realpath(cwd / Path(target).expanduser()))
                held = next((r for r in roots if r != real and r.is_relative_to(real)), None)
                if held is None:
                    continue
                where = (
                    "the sandbox stops it outside the workspace, but everything inside would go"
                    if sandboxed
                    else "and it would run outside any sandbox, deleting everything you can"
                )
                return (
                    f"`{' '.join(form)}` deletes {real} recursively, which holds the whole "
                    f"workspace {held}: {where}"
                )
    return None


def git_discard(
    segments: Sequence[Segment], cwd: Path, activity: WorkspaceActivity | None
) -> str | None:
    """Why a command must ask: a git command in it would discard uncommitted changes."""
    for segment in segments:
        for form in command_forms(segment.words) if segment.words else []:
            if form and program_name(form[0]) == "git":
                reason = discard_reason(form, cwd, activity)
                if reason is not None:
                    return reason
    return None
