"""Which files a shell command names, and whether that makes it more than a plain read.

The read-only classifier knows which programs only read; this module knows where. A read
of a secret file (`cat .env`, `grep KEY .env`, `cat < id_rsa`) or of anything outside
the workspace (`cat /etc/passwd`, `grep -r x ~`) is not a plain read: the policy asks.
And a command that names a policy file as anything but a read (`echo > .toolhost.toml`,
`cp x ~/.config/toolhost/config.toml`) must ask in every mode (guards.py).

Words are resolved the way bash would hand them to the program: relative to the folder
the command runs in, `~` expanded, braces and globs expanded against the file system,
every symlink followed. A word whose value bash computes (`$HOME/.ssh/id_rsa`) cannot be
resolved here, so a reading command with one is not a plain read either.
"""

from __future__ import annotations

import fnmatch
import glob
import itertools
import os
import re
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from lsp_server.fs.workspace import Workspace

from lsp_server.policy.commands.hidden_reads import (
    bash_pattern,
    folder_tilde,
    glob_options,
    link_concern,
    linked,
    names_from_input,
)
from lsp_server.policy.commands.options import git_subcommand
from lsp_server.policy.commands.read_programs import file_option_values
from lsp_server.policy.commands.recursive_reads import (
    MAX_ENTRIES,
    git_grep_concern,
    rg_concern,
    search_targets,
    walk_concern,
)
from lsp_server.runtime.sessions.activity import WorkspaceActivity
from lsp_server.sandbox.protected import ProtectedPaths
from lsp_server.sandbox.protected_scan import sandbox_holds
from lsp_server.shellparse.segments import Segment

# Programs that read no file named by their arguments.
_NO_FILE_ARGUMENTS = frozenset(
    (
        "echo",
        "printf",
        "pwd",
        "true",
        "false",
        "whoami",
        "id",
        "uname",
        "nproc",
        "free",
        "uptime",
        "seq",
        "printenv",
        "which",
        "type",
        "ps",
        "basename",
        "dirname",
        "tr",
    )
)
_MAGIC = ("/proc", "/sys", "/dev")
_HARMLESS = frozenset(("/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr"))
_MAX_MATCHES = 256
_POLICY_TEXT = "toolhost's policy, which decides what an agent may do without asking"


@attrs.frozen
class Places:
    """What the policy knows about the file system: the roots, what counts as a secret,
    and the policy files nobody may change without asking."""

    roots: tuple[Path, ...]
    readable: tuple[Path, ...] = ()
    is_secret: Callable[[Path], bool] = attrs.field(default=lambda path: False, eq=False)
    protected: frozenset[Path] = frozenset()
    """Policy files (real paths)."""
    protected_dirs: frozenset[Path] = frozenset()
    """Folders of toolhost's own files (user config, state): writing there asks too."""
    secret_names: re.Pattern[str] | None = attrs.field(default=None, eq=False)
    """Matches every file name a secret pattern could match (a quick filter before
    `is_secret`); None: every name may be a secret."""
    protected_paths: ProtectedPaths = attrs.field(factory=ProtectedPaths, eq=False)
    """Files that make other programs run code (.git, .vscode/, .envrc ...), with what
    each controls: writing one always asks (policy/protected_writes.py)."""
    activity: WorkspaceActivity | None = attrs.field(default=None, eq=False)
    """Who wrote what (runtime/sessions/activity.py): a git command that would discard
    uncommitted changes names whose they are (git_discards.py)."""

    def may_be_secret(self, name: str) -> bool:
        return self.secret_names is None or self.secret_names.fullmatch(name) is not None

    @classmethod
    def of_workspace(
        cls,
        workspace: Workspace,
        user_config: Path,
        trust_store: Path,
        config_name: str,
        protected_paths: ProtectedPaths | None = None,
        state: Path | None = None,
    ) -> Places:
        """The policy's view of `workspace`; the policy files are `config_name` in each
        root, the user config and the trust store (their folders are protected too).
        `state`: toolhost's state folder, where the sessions' activity log is."""
        roots = tuple(workspace.writable_roots())
        files = [*(root / config_name for root in roots), user_config, trust_store]
        return cls(
            roots=roots,
            readable=tuple(workspace.readable_roots),
            is_secret=workspace.is_secret,
            protected=frozenset(Path(os.path.realpath(f)) for f in files),
            protected_dirs=frozenset(
                Path(os.path.realpath(f.parent)) for f in (user_config, trust_store)
            ),
            secret_names=secret_name_filter(workspace.secret_patterns),
            protected_paths=protected_paths or ProtectedPaths(),
            activity=WorkspaceActivity.for_root(state, roots[0]) if roots else None,
        )

    def inside(self, real: Path, readable: bool = True) -> bool:
        bases = (*self.roots, *self.readable) if readable else self.roots
        return any(real == base or real.is_relative_to(base) for base in bases)

    def is_protected(self, real: Path) -> bool:
        return self.protection(real) is not None

    def protection(self, real: Path) -> str | None:
        """What running code or policy `real` controls; None when it is not protected."""
        if real in self.protected or any(
            real == d or real.is_relative_to(d) for d in self.protected_dirs
        ):
            return _POLICY_TEXT
        return self.protected_paths.controls(real, self.roots)

    def held_by_sandbox(self, real: Path) -> bool:
        """The workspace-write sandbox keeps `real` read-only whether or not it exists:
        outside the roots, or a protected name it holds (sandbox/protected_scan.py)."""
        root = next((r for r in self.roots if real == r or real.is_relative_to(r)), None)
        if root is None:
            return True
        return sandbox_holds(root, real.relative_to(root).parts, self.protected_paths)


def secret_name_filter(patterns: Sequence[str]) -> re.Pattern[str]:
    """One regex for the last components of gitignore-style `patterns` (`.aws/credentials`
    -> `credentials`, `.ssh/` -> `.ssh`): a name it rejects matches none of them."""
    names = {p.lstrip("!").rstrip("/").rsplit("/", 1)[-1] or "*" for p in patterns}
    return re.compile("|".join(fnmatch.translate(n) for n in sorted(names)) or "(?!)")


_RANGE = re.compile(r"\{(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?\}")
_LIST = re.compile(r"\{([^{}]*,[^{}]*)\}")


def _range(found: re.Match[str]) -> list[str] | None:
    """`{1..3}` -> [1, 2, 3], `{01..10..3}`, `{a..e}`; None when it is not a range bash
    expands (mixed ends) or has more than _MAX_MATCHES items."""
    first, last, step_text = found.group(1), found.group(2), found.group(3)
    step = abs(int(step_text)) if step_text else 1
    if first.isalpha() != last.isalpha() or step == 0:
        return None
    if first.isalpha():
        start, end = ord(first), ord(last)
    else:
        start, end = int(first), int(last)
    count = abs(end - start) // step + 1
    if count > _MAX_MATCHES:
        return None
    values = range(start, end + (1 if end >= start else -1), step if end >= start else -step)
    if first.isalpha():
        return [chr(v) for v in values]
    padded = any(len(e.lstrip("-")) > 1 and e.lstrip("-").startswith("0") for e in (first, last))
    width = max(len(first), len(last)) if padded else 0
    return [str(v).zfill(width) if v >= 0 else "-" + str(-v).zfill(width - 1) for v in values]


def _braces(word: str) -> tuple[list[str], bool]:
    """`a{b,c}d` -> [abd, acd], `f{1..3}` -> [f1, f2, f3]: at most _MAX_MATCHES words
    however many braces there are, and whether that is all of them."""
    done: list[str] = []
    pending = [word]
    complete = True
    while pending and len(done) < _MAX_MATCHES:
        current = pending.pop()
        found = _LIST.search(current)
        choices = found.group(1).split(",") if found is not None else None
        ranged = _RANGE.search(current) if found is None else None
        if ranged is not None:
            found, choices = ranged, _range(ranged)
            complete = complete and choices is not None
        if found is None or choices is None:
            done.append(current)
            continue
        head, tail = current[: found.start()], current[found.end() :]
        pending += [head + choice + tail for choice in choices]
        if len(pending) > _MAX_MATCHES:
            complete = False
            del pending[:-_MAX_MATCHES]
    return done, complete and not pending


def expand_word(word: str, cwd: Path, patterned: bool) -> list[str]:
    """The words bash would pass for `word` (tilde, braces and globs expanded)."""
    return expansion(word, cwd, patterned)[0]


def expansion(word: str, cwd: Path, patterned: bool) -> tuple[list[str], bool]:
    """The words bash would pass for `word` (tilde, braces and globs expanded), and
    whether that is all of them (not cut at _MAX_MATCHES per brace choice)."""
    if not patterned:
        return [word], True
    out: list[str] = []
    choices, complete = _braces(word)
    for choice in choices:
        if choice.startswith("~"):
            # os.path leaves an unknown user (`~nobody0`) as it is; Path raises.
            choice = os.path.expanduser(choice)  # noqa: PTH111
        if any(c in choice for c in "*?["):
            pattern = bash_pattern(choice) or choice  # bash's `[^x]` is glob's `[!x]`
            found = glob.iglob(pattern, root_dir=cwd)  # noqa: PTH207 (relative, as bash gives)
            matches = list(itertools.islice(found, _MAX_MATCHES + 1))
            complete = complete and len(matches) <= _MAX_MATCHES
            out += matches[:_MAX_MATCHES] or [choice]
        else:
            out.append(choice)
    return out, complete


def real_path(word: str, cwd: Path) -> Path:
    return Path(os.path.realpath(cwd / word))


def _option_value(arg: str) -> str | None:
    """The value of `--file=x` (options may name files too)."""
    if arg.startswith("--") and "=" in arg:
        return arg.split("=", 1)[1]
    return None


def read_candidates(segment: Segment) -> Iterator[tuple[str, bool, bool]]:
    """(word, expanding, patterned) for each word a reading program may open."""
    words = segment.words
    program = words[0] if words else ""
    if program not in _NO_FILE_ARGUMENTS:
        for index, word in enumerate(words[1:], start=1):
            value = _option_value(word)
            if value is not None:
                yield value, index in segment.expanding, index in segment.patterned
            elif not word.startswith("-") or word == "-":
                yield word, index in segment.expanding, index in segment.patterned
            if program == "git" and ":" in word and not word.startswith("-"):
                yield word.split(":", 1)[1], False, False  # HEAD:.env
    if words and program not in _NO_FILE_ARGUMENTS:
        for value in file_option_values(words):  # `date -f.env`: a file attached to -f
            yield value, False, False
    for redirect in segment.redirects:
        if "<" in redirect.operator and redirect.target and "<<" not in redirect.operator:
            yield redirect.target, "$" in redirect.target, False


def read_concern(segment: Segment, cwd: Path, places: Places) -> str | None:
    """Why this (otherwise read-only) simple command is not a plain read, or None."""
    concern = names_from_input(segment) or glob_options(segment)
    if concern is not None:
        return concern
    for word, expanding, patterned in read_candidates(segment):
        if word in ("-", ""):
            continue
        if expanding:
            return f"the argument {word!r} is computed when the command runs"
        if patterned and bash_pattern(word) is None:
            return f"the pattern {word!r} is one toolhost cannot expand to check it"
        if patterned:
            word, unknown = folder_tilde(word, cwd)  # `~+/.env` is ./.env
            if unknown is not None:
                return unknown
        candidates, complete = expansion(word, cwd, patterned)
        if not complete:
            return f"{word!r} expands to more than {_MAX_MATCHES} names, too many to check"
        for candidate in candidates:
            concern = _place_concern(candidate, cwd, places)
            if concern is not None:
                return concern
    return _search_concern(segment, cwd, places)


def _search_concern(segment: Segment, cwd: Path, places: Places) -> str | None:
    """`grep -r`, `rg`: what the folders they search hold (recursive_reads.py)."""
    if not segment.words:
        return None
    if segment.words[0] == "git":
        found_subcommand = git_subcommand(segment.words[1:])
        if found_subcommand is None or found_subcommand[0] != "grep":
            return None
        return git_grep_concern(segment.words[1:], cwd, places)
    found = search_targets(segment.words)
    if found is None:
        return None
    targets, hidden, follows = found
    rg = shutil.which("rg") if segment.words[0] == "rg" else None
    if rg is not None:
        paths = [c for t in targets for c in expand_word(t, cwd, True)]
        return rg_concern(rg, segment.words[1:], paths, cwd, places)
    budget = [MAX_ENTRIES]
    for target in targets:
        for candidate in expand_word(target, cwd, True):
            real = real_path(candidate, cwd)
            if real.is_dir():
                concern = walk_concern(real, places, hidden, follows, budget)
                if concern is not None:
                    return concern
    return None


def _place_concern(word: str, cwd: Path, places: Places) -> str | None:
    if word in _HARMLESS:
        return None
    real = real_path(word, cwd)
    text = os.path.normpath(cwd / word)
    if any(text == m or text.startswith(m + "/") for m in _MAGIC):
        return f"{word!r} is in a system folder"
    if not places.inside(real):
        return f"{word!r} is outside the workspace ({real})"
    if real.exists() and places.is_secret(real):  # a missing file shows nothing
        return f"{word!r} looks like a secret file"
    # A hard link is its file under another name (`notes.txt` may be `.env`).
    return link_concern(linked([real]), places)


def names_protected(segments: Sequence[Segment], cwd: Path, places: Places) -> str | None:
    """Why a command that may write could change a policy file; None when it names none."""
    for segment in segments:
        targets = [(r.target, False) for r in segment.redirects if r.writes]
        targets += [
            (word, index in segment.patterned)
            for index, word in enumerate(segment.words[1:], start=1)
            if not word.startswith("-") or "=" in word
        ]
        for word, patterned in targets:
            value = _option_value(word) or word
            if "toolhost" in value and ("$" in value or "`" in value):
                return f"{value!r} may name a toolhost policy file"
            for candidate in expand_word(value, cwd, patterned):
                real = real_path(candidate, cwd)
                if places.is_protected(real):
                    return f"it names {real}, a policy file"
    return None
