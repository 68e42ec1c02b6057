"""Files that make other programs run code: protected whether or not they exist.

An agent that writes `.vscode/tasks.json`, `.envrc` or `.git/config` runs code the next
time the user opens the folder, enters it or runs git, outside any sandbox; one that
writes `.toolhost.toml` or `.claude/settings.json` widens what an agent may do. So these
paths are read-only in the sandbox (a missing one cannot be created: placeholders.py) and a
tool or an unsandboxed command that writes one always asks, naming what it controls
(policy/guards.py). The list is built in; `workspace.protected_paths` adds to it.

What is NOT here: files the user runs on purpose (Makefile, package.json scripts, build.rs,
tests). The agent edits those as its job; these are files that run code by themselves.

Patterns are gitignore-style, relative to each root: a name without a slash matches at
any depth (`.git` also protects `sub/.git/config`); one with a slash is anchored to the
root; a trailing slash is allowed (`.vscode/`) and protects the folder and everything in it.
"""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

import attrs

Placeholder = Literal["file", "folder"]


@attrs.frozen
class ProtectedEntry:
    pattern: str
    """Gitignore-style, relative to each root."""
    controls: str
    """What running code the file controls, for approvals and docs."""
    placeholder: Placeholder | None = "file"
    """What holds the name read-only in the sandbox while it does not exist (at the top of
    each root): an empty file, or an empty folder for a folder name. A folder because the
    user's own programs may create files in it meanwhile (VS Code a settings file, an
    agent CLI its local settings: the folder then stays, as theirs), and because git
    looks past an empty `.git` folder for an enclosing repository (a file stops it).
    None: protected only where it exists."""
    parts: tuple[str, ...] = attrs.field(
        init=False,
        default=attrs.Factory(
            lambda self: tuple(p for p in self.pattern.strip("/").split("/") if p),
            takes_self=True,
        ),
    )
    """The pattern's components."""

    @property
    def anchored(self) -> bool:
        return len(self.parts) > 1 or self.pattern.startswith("/")

    @property
    def glob(self) -> bool:
        return any(c in part for part in self.parts for c in "*?[\\")

    @property
    def plain_name(self) -> str | None:
        """The name a placeholder takes at the top of a root (no glob, no folder part)."""
        if len(self.parts) != 1 or self.glob:
            return None
        return self.parts[0]

    def matches(self, parts: Sequence[str]) -> bool:
        """Whether the path of `parts` (components, relative to a root) is this entry or
        lies inside it."""
        if not self.parts:
            return False
        if not self.anchored:
            return any(fnmatch.fnmatchcase(part, self.parts[0]) for part in parts)
        return _prefix_matches(self.parts, tuple(parts))


def _prefix_matches(pattern: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    """The pattern's components match a prefix of `parts` (`**` = any number of them)."""
    if not pattern:
        return True
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_prefix_matches(rest, parts[i:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatch.fnmatchcase(parts[0], head) and _prefix_matches(rest, parts[1:])


_AGENT = "an agent CLI's project settings: its hooks and MCP servers run commands, its allow "
BUILT_IN: tuple[ProtectedEntry, ...] = (
    ProtectedEntry(
        ".toolhost.toml",
        "toolhost's workspace policy: the sandbox, the policy mode and allow rules at the "
        "next start",
    ),
    ProtectedEntry(
        ".git",
        "git hooks and config (core.fsmonitor, core.pager, aliases, filters) run programs on "
        "the user's next git command",
        "folder",
    ),
    ProtectedEntry(
        ".vscode/",
        "VS Code settings and tasks (a task can run on folder open; settings name programs "
        "and set toolhost's own policy)",
        "folder",
    ),
    ProtectedEntry(
        ".idea/",
        "JetBrains IDE settings (run configurations, startup tasks, external tools)",
        "folder",
    ),
    ProtectedEntry(".envrc", "direnv runs it as shell code when the user enters the folder"),
    ProtectedEntry(
        ".npmrc",
        "npm configuration (script-shell, node-options) applies to every npm command",
    ),
    ProtectedEntry(
        ".yarnrc", "yarn configuration (yarn-path runs a program for every yarn command)"
    ),
    ProtectedEntry(
        ".yarnrc.yml", "yarn configuration (yarnPath runs a program for every yarn command)"
    ),
    ProtectedEntry(
        "pip.conf",
        "pip configuration (index-url decides where installed packages come from)",
        None,  # read from a virtual environment's folder: held there by the sandbox
    ),
    ProtectedEntry(".pip/", "pip configuration (where installed packages come from)", None),
    ProtectedEntry(
        ".dir-locals.el", "Emacs directory variables (eval forms and hooks run on open)"
    ),
    ProtectedEntry(
        ".dir-locals-2.el", "Emacs directory variables (eval forms and hooks run on open)"
    ),
    ProtectedEntry(".nvim.lua", "Neovim runs it as Lua code on start (exrc)"),
    ProtectedEntry(".nvimrc", "Neovim and Vim run it as commands on start (exrc)"),
    ProtectedEntry(".exrc", "Vim and Neovim run it as commands on start (exrc)"),
    ProtectedEntry(".claude/", _AGENT + "lists (Claude Code)", "folder"),
    ProtectedEntry(".mcp.json", "the MCP servers an agent CLI starts: commands it runs"),
    ProtectedEntry(".codex/", _AGENT + "lists (Codex)", "folder"),
    ProtectedEntry(".gemini/", _AGENT + "lists (Gemini CLI)", "folder"),
    ProtectedEntry(".cursor/", _AGENT + "lists (Cursor)", "folder"),
    ProtectedEntry(".zed/", "Zed settings and tasks (language server commands, tasks)", "folder"),
    ProtectedEntry(".helix/", "Helix settings (language server commands)", "folder"),
    ProtectedEntry(
        ".devcontainer/",
        "dev container definitions (postCreateCommand runs when the folder is reopened in a "
        "container)",
        "folder",
    ),
    ProtectedEntry(
        ".husky/", "git hooks of husky (run on commit where core.hooksPath points there)", None
    ),
    ProtectedEntry(
        ".pre-commit-config.yaml", "pre-commit hooks (commands run on every commit)", None
    ),
)
CONFIGURED = "listed in workspace.protected_paths"


@attrs.frozen(cache_hash=True)
class ProtectedPaths:
    """The built-in entries plus the configured ones."""

    entries: tuple[ProtectedEntry, ...] = BUILT_IN

    @classmethod
    def with_extra(cls, patterns: Iterable[str]) -> ProtectedPaths:
        """The built-ins and `patterns` (a negation `!x` cannot remove one: ignored)."""
        known = {entry.pattern.strip("/") for entry in BUILT_IN}
        extra = []
        for pattern in patterns:
            text = pattern.strip()
            if not text or text.startswith(("!", "#")) or text.strip("/") in known:
                continue
            known.add(text.strip("/"))
            kind: Placeholder = "folder" if text.endswith("/") else "file"
            extra.append(ProtectedEntry(text, CONFIGURED, kind))
        return cls((*BUILT_IN, *extra))

    def match(self, parts: Sequence[str]) -> ProtectedEntry | None:
        """The entry that protects the path of `parts` (relative to a root), if any."""
        by_name = self._by_name
        for part in parts:
            entry = by_name.get(part)
            if entry is not None:
                return entry
        return next((entry for entry in self._others if entry.matches(parts)), None)

    @functools.cached_property
    def _by_name(self) -> dict[str, ProtectedEntry]:
        """Entries that are a bare name (most): found by a dict lookup per component."""
        found: dict[str, ProtectedEntry] = {}
        for entry in self.entries:
            if not entry.anchored and not entry.glob and entry.parts:
                found.setdefault(entry.parts[0], entry)
        return found

    @functools.cached_property
    def _others(self) -> tuple[ProtectedEntry, ...]:
        return tuple(e for e in self.entries if e.anchored or e.glob)

    def controls(self, path: Path, roots: Sequence[Path]) -> str | None:
        """What running code `path` (a real path) controls, or None when unprotected.
        Outside every root the whole path is searched (a name matches at any depth)."""
        root = next((r for r in roots if path == r or path.is_relative_to(r)), None)
        parts = path.relative_to(root).parts if root is not None else path.parts[1:]
        entry = self.match(parts)
        return entry.controls if entry is not None else None

    def top_level(self) -> dict[str, Placeholder]:
        """Names held by a placeholder at the top of each root while they do not exist."""
        return dict(self._top)

    @functools.cached_property
    def _top(self) -> tuple[tuple[str, Placeholder], ...]:
        return tuple(
            (name, entry.placeholder)
            for entry in self.entries
            if entry.placeholder is not None and (name := entry.plain_name) is not None
        )

    def held_at_top(self, parts: Sequence[str]) -> bool:
        """The sandbox holds this root-relative path read-only whether or not it exists:
        it is, or lies inside, a name held at the top of the root."""
        return bool(parts) and any(parts[0] == name for name, _ in self._top)

    def names(self) -> tuple[str, ...]:
        """Plain names of every entry (for spotting them in text, as words or inside code)."""
        return tuple(
            p for entry in self.entries for p in entry.parts[-1:] if not any(c in p for c in "*?[")
        )


def protected_paths(
    workspace_extra: Iterable[str], sandbox_read_only: Iterable[str]
) -> ProtectedPaths:
    """The configured list: `workspace.protected_paths` and the older
    `shell.sandbox_read_only` (both apply) over the built-ins."""
    return ProtectedPaths.with_extra([*workspace_extra, *sandbox_read_only])
