"""Path resolution and confinement: every path a tool touches crosses `Workspace.resolve`."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import pathspec

if TYPE_CHECKING:
    from lsp_server.config.tree import WorkspaceConfig

from lsp_server.core.errors import (
    FS_NOT_FOUND,
    INVALID_ARGUMENT,
    OUTSIDE_SCOPE,
    SECRET_FILE,
    ToolError,
)

Access = Literal["read", "write"]

NEVER_WALKED = frozenset(("/proc", "/sys", "/dev"))
"""Absolute folders no walk of a root enters (a root that is `/`), whatever their device:
the checkpoints' measure and watches, the sweep of leftover temp files, the sandbox's scan."""

# Files that readers refuse unless policy explicitly allows them (gitignore syntax).
SECRET_PATTERNS: tuple[str, ...] = (
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".ssh/",
    ".gnupg/",
    ".netrc",
    ".git-credentials",
    ".aws/credentials",
    ".npmrc",
    ".pypirc",
)
MAX_PATH_BYTES = 4096
SECRET_ANSWERS = 4096
# Magic file systems whose links lead anywhere (/proc/self/root, /proc/<pid>/cwd ...).
MAGIC_PREFIXES = ("/proc", "/sys", "/dev")


def _is_within(path: Path, root: Path) -> bool:
    """`path == root or root in path.parents`, on the strings (both are normalised Paths):
    no Path object per parent on every check."""
    return _text_within(str(path), str(root))


def _text_within(text: str, top: str) -> bool:
    return text == top or text.startswith(top if top.endswith("/") else top + "/")


class Workspace:
    def __init__(
        self,
        roots: Sequence[Path],
        *,
        extra_roots: Iterable[str] = (),
        readable_roots: Iterable[str] = (),
        secret_patterns: Iterable[str] = (),
        allowed_secrets: Iterable[str] = (),
    ) -> None:
        self.roots = [Path(os.path.realpath(root)) for root in roots]
        self.extra_roots = [Path(os.path.realpath(Path(r).expanduser())) for r in extra_roots]
        self.readable_roots = [Path(os.path.realpath(Path(r).expanduser())) for r in readable_roots]
        self.secret_patterns = (*SECRET_PATTERNS, *secret_patterns)
        self._secrets = pathspec.PathSpec.from_lines("gitignore", self.secret_patterns)
        self._allowed_secrets = pathspec.PathSpec.from_lines("gitignore", allowed_secrets)
        self._secret_answers: dict[Path, bool] = {}
        # The roots, deepest first, as (text, Path): fixed when the workspace is built.
        self._writable_tops = _deepest_first(self.writable_roots())
        self._real_tops = _deepest_first([*self.writable_roots(), *self.readable_roots])

    @classmethod
    def from_config(cls, roots: Sequence[Path], config: WorkspaceConfig) -> Workspace:
        return cls(
            roots,
            extra_roots=config.extra_roots,
            readable_roots=config.readable_roots,
            secret_patterns=config.secret_patterns,
            allowed_secrets=config.allowed_secrets,
        )

    @property
    def primary_root(self) -> Path:
        if not self.roots:
            raise ToolError(
                OUTSIDE_SCOPE,
                "the server has no workspace folder",
                "open a folder in the editor or start toolhost with --root",
            )
        return self.roots[0]

    def writable_roots(self) -> list[Path]:
        return [*self.roots, *self.extra_roots]

    def root_of(self, path: Path) -> Path | None:
        text = str(path)
        for top, root in self._writable_tops:
            if _text_within(text, top):
                return root
        return None

    def confining_root(self, path: Path) -> Path:
        """The root a resolved path is used beneath (fs/beneath.py walks from it)."""
        root = self.root_of(path)
        if root is None:
            root = next((r for r in self.readable_roots if _is_within(path, r)), None)
        if root is None:
            raise ToolError(
                OUTSIDE_SCOPE,
                f"{path} is outside the workspace roots",
                "use a path inside the workspace",
            )
        return root

    def contains(self, path: Path, access: Access = "write") -> bool:
        if self.root_of(path) is not None:
            return True
        return access == "read" and any(_is_within(path, r) for r in self.readable_roots)

    def resolve(self, raw: str, access: Access = "read", *, base: Path | None = None) -> Path:
        """The real path of `raw` (every symlink resolved, dangling ones too), confined."""
        if "\x00" in raw:
            raise ToolError(INVALID_ARGUMENT, "the path contains a NUL byte", "pass a plain path")
        if len(os.fsencode(raw)) > MAX_PATH_BYTES:
            raise ToolError(INVALID_ARGUMENT, "the path is too long", "pass a shorter path")
        if not raw.strip():
            raise ToolError(INVALID_ARGUMENT, "the path is empty", "pass a file path")
        if raw.startswith("~"):
            raise ToolError(
                OUTSIDE_SCOPE,
                f"{raw!r} points into a home folder, outside the workspace",
                "use a path inside the workspace (relative to its root)",
            )
        # Strings, not Paths: this runs for every path of every call.
        top = base or self.primary_root
        candidate = raw if raw.startswith("/") else os.path.join(top, raw)  # noqa: PTH118
        normal = os.path.normpath(candidate)
        if any(normal == p or normal.startswith(p + "/") for p in MAGIC_PREFIXES):
            raise ToolError(
                OUTSIDE_SCOPE,
                f"{raw!r} goes through a system folder",
                "use a path inside the workspace",
            )
        plain = ".." not in raw.split("/") and not normal.startswith("//")
        below = real_below(self._real_tops, normal) if plain else None
        real = Path(below) if below is not None else real_path_of(candidate, raw)
        if not self.contains(real, access):
            roots = ", ".join(str(r) for r in self.roots) or "(none)"
            raise ToolError(
                OUTSIDE_SCOPE,
                f"{raw!r} resolves to {real}, outside the workspace roots ({roots})",
                "use a path inside the workspace; symlinks pointing out are not followed",
            )
        if access == "write" and ".git" in real.parts[len(self._anchor(real).parts) :]:
            raise ToolError(
                OUTSIDE_SCOPE,
                f"{self.relative(real)} is inside .git/, which tools may only read",
                "use git commands through bash to change the repository",
            )
        return real

    def _anchor(self, path: Path) -> Path:
        return self.root_of(path) or Path("/")

    def relative(self, path: Path) -> str:
        """A display path: relative to its workspace root, else absolute."""
        root = self.root_of(path)
        if root is None:
            return str(path)
        text = relative_text(path, root)
        if len(self.roots) > 1 and root in self.roots and root != self.roots[0]:
            return f"{root.name}/{text}"
        return text

    def is_secret(self, path: Path) -> bool:
        """Whether the patterns call `path` a secret; remembered per path (bounded): the
        patterns and roots are fixed when the workspace is built."""
        known = self._secret_answers.get(path)
        if known is None:
            if len(self._secret_answers) >= SECRET_ANSWERS:
                self._secret_answers.clear()
            known = self._secret_answers[path] = self._match_secret(path)
        return known

    def _match_secret(self, path: Path) -> bool:
        root = self.root_of(path)
        rel = path.relative_to(root).as_posix() if root is not None else path.as_posix()
        if self._allowed_secrets.match_file(rel):
            return False
        return self._secrets.match_file(rel) or self._secrets.match_file(path.name)

    def require_not_secret(self, path: Path) -> None:
        if self.is_secret(path):
            raise ToolError(
                SECRET_FILE,
                f"{self.relative(path)} looks like a secret (credentials or keys)",
                "it is not shown to tools; a user can allow it with workspace.allowed_secrets",
            )


def relative_text(path: Path, root: Path) -> str:
    """`path.relative_to(root).as_posix()` for a `path` within `root` (both normalised),
    on the strings: "." for the root itself."""
    text, top = str(path), str(root)
    if text == top:
        return "."
    return text[len(top) if top.endswith("/") else len(top) + 1 :]


def _deepest_first(roots: Iterable[Path]) -> list[tuple[str, Path]]:
    return sorted(((str(r), r) for r in roots), key=lambda pair: len(pair[1].parts), reverse=True)


def real_below(tops: Iterable[tuple[str, Path]], normal: str) -> str | None:
    """`os.path.realpath(normal)` for a normalised path inside a root (roots are real
    paths): one lstat for each part below the root, none for the folders above it. None
    when a part is a symlink or cannot be looked at: realpath then says where it leads."""
    for top, _ in tops:
        if _text_within(normal, top):
            break
    else:
        return None
    if normal == top:
        return normal
    current = top.rstrip("/")
    for part in normal[len(current) + 1 :].split("/"):
        current += "/" + part
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return None
        except (FileNotFoundError, NotADirectoryError):
            return normal  # nothing below exists: realpath keeps the rest as written
        except OSError:
            return None
    return normal


def real_path_of(candidate: str | Path, raw: str, attempts: int = 3) -> Path:
    """`os.path.realpath`, tried again when the path changes under it (a symlink swapped
    for a file between its lstat and its readlink raises EINVAL); a path that keeps
    changing is refused, never an internal error."""
    problem = "it kept changing"
    for _ in range(attempts):
        try:
            return Path(os.path.realpath(candidate))
        except OSError as exc:
            problem = exc.strerror or str(exc)
    raise ToolError(
        FS_NOT_FOUND,
        f"{raw!r} changed while toolhost resolved it ({problem})",
        "retry when nothing is renaming or replacing it",
    )
