"""Whether a repository's own configuration would make a "read-only" git command run code.

A repository's `.git/config` (or a file it includes) can name programs that `git status`,
`git diff` or `git log` run by themselves: `core.fsmonitor`, `diff.external`,
`diff.<driver>.textconv`, `filter.<driver>.clean` ...; and `git status` runs the
`post-index-change` hook when it refreshes the index. When the repository sets any of
these, git commands there are not plain reads: the policy asks first (readOnly mode
refuses them). The user's own global and system config are theirs and stay trusted.

git itself reads the configuration (`git config --list --show-scope --includes`), so
includes, conditional includes and the file syntax are understood exactly as the command
will understand them; `git config` runs none of the programs it lists.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

# Keys (lower case; <x> = any subsection) whose value is a program git may run.
_PROGRAM_KEYS = re.compile(
    r"core\.(fsmonitor|pager|editor|sshcommand|gitproxy|askpass|hookspath|worktree"
    r"|alternaterefscommand)"
    r"|pager\..+|sequence\.editor|diff\.external|diff\..+\.(command|textconv)"
    r"|filter\..+\.(clean|smudge|process)|merge\..+\.driver|gpg(\..+)?\.program"
    r"|credential(\..+)?\.helper|uploadpack\.packobjectshook|interactive\.difffilter"
    r"|remote\..+\.(uploadpack|receivepack)"
)
# The subset that commands counted as reads run (status, diff, log, show, grep, blame
# ...; core.worktree points them at files elsewhere), and what `git remote show` adds by
# talking to the remote. Editors, merge drivers and hooksPath itself (husky sets it) are
# not used by reads; the hooks in hooksPath are checked like .git/hooks.
_READ_KEYS = re.compile(
    r"core\.(fsmonitor|pager|worktree)|pager\..+|diff\.external"
    r"|diff\..+\.(command|textconv)|filter\..+\.(clean|smudge|process)|gpg(\..+)?\.program"
)
_REMOTE_KEYS = re.compile(
    r"core\.(sshcommand|gitproxy|askpass)|credential(\..+)?\.helper"
    r"|remote\..+\.(uploadpack|receivepack)"
)
_FALSE = frozenset(("", "false", "no", "off", "0"))
_REPOSITORY_SCOPES = frozenset(("local", "worktree"))
# Hooks that commands counted as reads can trigger (git status writes the index).
_READ_HOOKS = ("post-index-change",)
_TIMEOUT_SECONDS = 10.0


def _git(args: Sequence[str], cwd: Path) -> str | None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_OPTIONAL_LOCKS"] = "0"
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None


def _entries(listing: str, scoped: bool) -> Iterator[tuple[str, str, str]]:
    """(scope, key, value) from `git config --list -z [--show-scope]` output."""
    parts = listing.split("\0")
    index = 0
    while index < len(parts):
        scope = "local"
        if scoped:
            scope = parts[index]
            index += 1
        if index >= len(parts) or not parts[index]:
            break
        key, _, value = parts[index].partition("\n")
        index += 1
        yield scope, key.lower(), value


def program_key(key: str, value: str) -> bool:
    """Whether a git config key (lower case) names a program git may run."""
    if not _PROGRAM_KEYS.fullmatch(key):
        return False
    if key == "core.fsmonitor":
        return value.strip().lower() not in _FALSE | {"true", "yes", "on", "1"}
    return True


def _effective_dir(cwd: Path, git_args: Sequence[str]) -> Path:
    """Where `git -C a -C b ...` runs."""
    where = cwd
    index = 0
    while index + 1 < len(git_args) and git_args[index].startswith("-"):
        if git_args[index] == "-C":
            where = where / git_args[index + 1]
            index += 2
        else:
            index += 1
    return where


Stamp = tuple[tuple[str, int, int, int], ...]
# (stamp, concern for reads, concern for commands that talk to the remote, watched files)
Answer = tuple[Stamp, str | None, str | None, tuple[Path, ...]]


class GitConfigGuard:
    """Why a git command run in a folder could run a program the repository chose (None
    when its configuration names none), with the answer kept per folder while none of the files it
    depends on (the repository's config files, the files they include, HEAD for
    `includeIf onbranch:`, the hook) has changed, so auto-approved git reads do not pay
    a `git config` run each time."""

    def __init__(self, capacity: int = 64) -> None:
        self.capacity = capacity
        self._answers: dict[Path, Answer] = {}

    def concern(self, cwd: Path, git_args: Sequence[str]) -> str | None:
        where = _effective_dir(cwd, git_args)
        git_dir = find_git_dir(where) if where.is_dir() else None
        if git_dir is None:
            return None  # no repository: only the user's own config applies
        remote = _talks_to_remote(git_args)
        known = self._answers.get(where)
        if known is None or known[0] != _stamp(git_dir, known[3]):
            known = self._examine(where, git_dir)
            if known is None:  # fail closed: what git could not show may name a program
                return "git could not list the repository's config"
        return known[1] or (known[2] if remote else None)

    def _examine(self, where: Path, git_dir: Path) -> Answer | None:
        listing = _git(["config", "--list", "--show-scope", "--includes", "-z"], where)
        if listing is None:
            return None
        entries = [e for e in _entries(listing, scoped=True) if e[0] in _REPOSITORY_SCOPES]
        hooks = _hooks_dir(git_dir, entries)
        watched = (*_included_files(git_dir, entries), *(hooks / n for n in _READ_HOOKS))
        reads = _listing_concern(entries, _READ_KEYS) or _hook_concern(hooks)
        reads = reads or _submodule_concern(git_dir)
        answer = (_stamp(git_dir, watched), reads, _listing_concern(entries, _REMOTE_KEYS), watched)
        if len(self._answers) >= self.capacity:
            self._answers.pop(next(iter(self._answers)))
        self._answers[where] = answer
        return answer


def _talks_to_remote(git_args: Sequence[str]) -> bool:
    words = [a for a in git_args if not a.startswith("-")]
    return words[:2] == ["remote", "show"] or words[:1] == ["ls-remote"]


def _hooks_dir(git_dir: Path, entries: Sequence[tuple[str, str, str]]) -> Path:
    """core.hooksPath (relative to the worktree) or .git/hooks."""
    for _, key, value in reversed(entries):
        if key == "core.hookspath" and value:
            path = Path(os.path.expanduser(value))  # noqa: PTH111 (never raises)
            return path if path.is_absolute() else git_dir.parent / path
    return git_dir / "hooks"


def _listing_concern(entries: Sequence[tuple[str, str, str]], keys: re.Pattern[str]) -> str | None:
    for _, key, value in entries:
        if keys.fullmatch(key) and program_key(key, value):
            return f"the repository's git config sets {key}, which runs a program"
    return None


def _included_files(git_dir: Path, entries: Sequence[tuple[str, str, str]]) -> tuple[Path, ...]:
    found = []
    for _, key, value in entries:
        if key == "include.path" or (key.startswith("includeif.") and key.endswith(".path")):
            path = Path(os.path.expanduser(value))  # noqa: PTH111 (never raises)
            found.append(path if path.is_absolute() else git_dir / path)
    return tuple(found)


def _stamp(git_dir: Path, includes: Sequence[Path]) -> Stamp:
    watched = [git_dir / n for n in ("config", "config.worktree", "HEAD", "modules")]
    watched += [git_dir / "hooks" / name for name in _READ_HOOKS]
    watched += includes
    stamp = []
    for path in watched:
        try:
            info = path.stat()
        except OSError:
            stamp.append((str(path), 0, 0, 0))
            continue
        stamp.append((str(path), info.st_mtime_ns, info.st_size, info.st_mode))
    return tuple(stamp)


def find_git_dir(where: Path) -> Path | None:
    """The repository folder git would use from `where` (`.git`, or the folder a `.git`
    file points to, and its common folder for linked worktrees); None outside one."""
    for folder in (where, *where.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            try:
                text = dot_git.read_text(encoding="utf-8", errors="replace")
            except OSError:
                return None
            if not text.startswith("gitdir:"):
                return None
            git_dir = (folder / text[len("gitdir:") :].strip()).resolve()
            common = git_dir / "commondir"
            if common.is_file():
                return (git_dir / common.read_text(errors="replace").strip()).resolve()
            return git_dir
    return None


def _hook_concern(hooks: Path) -> str | None:
    for name in _READ_HOOKS:
        hook = hooks / name
        if hook.is_file() and os.access(hook, os.X_OK):
            return f"the repository has a {name} hook, which git status runs"
    return None


def _submodule_concern(git_dir: Path) -> str | None:
    """git status and diff recurse into submodules, whose configs are their own."""
    modules = git_dir / "modules"
    if not modules.is_dir():
        return None
    for config in sorted(modules.rglob("config"))[:64]:
        listing = _git(["config", "--file", str(config), "--list", "--includes", "-z"], modules)
        for _, key, value in _entries(listing or "", scoped=False):
            if _READ_KEYS.fullmatch(key) and program_key(key, value):
                return f"a submodule's git config sets {key}, which runs a program"
        hook = _hook_concern(config.parent / "hooks")
        if hook is not None:
            return hook
    return None
