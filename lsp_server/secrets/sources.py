"""Where the known secret values come from: the server's environment (credential names,
names.py), the workspace's `.env` files (KEY=VALUE lines), the other files readers refuse
as secrets (`*.pem`, `*.key`, `id_*`, `.netrc` ...: their values, long lines and tokens)
and the user's own credential files below the home folder (USER_CREDENTIAL_FILES).

Files are found by a bounded walk of the roots (SecretFiles says when; a later walk lists
again only the folders that changed: file_walk.py), and a found file is parsed again only
when its stat changes.
"""

from __future__ import annotations

import itertools
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_server.fs.shared_listings import SharedListings
from lsp_server.fs.workspace import SECRET_PATTERNS
from lsp_server.secrets.file_walk import FileWalk
from lsp_server.secrets.names import CredentialNames
from lsp_server.secrets.redaction import MIN_CHARS, Secret
from lsp_server.secrets.user_files import USER_CREDENTIAL_FILES

if TYPE_CHECKING:
    from lsp_server.fs.workspace import Workspace

RESCAN_SECONDS = 10.0
USER_FILES_SECONDS = 2.0
MAX_ENTRIES = 20_000
FIRST_WALK_ENTRIES = 2_000
MAX_FILE_BYTES = 256 * 1024
MAX_SECRETS_PER_FILE = 2_000

_DOTENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*[=:]\s*(.*?)\s*$")
_INI_LINE = re.compile(r"^\s*[^\s=#;]+\s*=\s*(.+?)\s*$")
_PLAIN = re.compile(
    r"[A-Za-z]+(?:[-_. ][A-Za-z]+)*|[0-9.]+|(?:[a-z][a-z0-9+.-]*://[^@\s]*)|/[^\s]*"
)
_URL_PASSWORD = re.compile(r"://[^\s/@:]*:([^\s/@]+)@")
_SECTION = re.compile(r"\[[^\]]*\]")
# A run that looks like a token: no ':' or '@', so that URLs and JSON pairs split.
_TOKEN = re.compile(r"[A-Za-z0-9+/=_.~-]{16,}")


def environment_secrets(env: Mapping[str, str], names: CredentialNames) -> list[Secret]:
    """The values of the credential variables, but not one that names an existing file
    (GOOGLE_APPLICATION_CREDENTIALS=/home/me/key.json: the path is no secret, and hiding it
    would hide it everywhere; the file's own values are not known)."""
    secrets: list[Secret] = []
    for name, value in names.credentials(env).items():
        if value.startswith("/") and _exists(value):
            continue
        secrets.append(Secret(value, name))
        secrets.extend(_url_password(value, name))
    return secrets


def _url_password(value: str, name: str) -> list[Secret]:
    return [Secret(found, name) for found in _URL_PASSWORD.findall(value)]


def dotenv_secrets(label: str, text: str, names: CredentialNames) -> list[Secret]:
    """KEY=VALUE lines: the value of a credential's name always; another value when it
    does not look like a plain word, number, path or URL without a password (NODE_ENV=
    production stays readable everywhere)."""
    secrets: list[Secret] = []
    for line in text.splitlines():
        found = _DOTENV_LINE.match(line)
        if found is None or line.lstrip().startswith("#"):
            continue
        key, value = found.group(1), _unquote(found.group(2))
        if len(value) < MIN_CHARS:
            continue
        if names.is_credential(key, value) or not _PLAIN.fullmatch(value):
            secrets.append(Secret(value, f"{label}:{key}"))
            secrets.extend(_url_password(value, f"{label}:{key}"))
    return secrets


def _unquote(raw: str) -> str:
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    return raw.split(" #", 1)[0].rstrip()


def file_secrets(label: str, text: str) -> list[Secret]:
    """A key or credentials file: its values (`k = v`, netrc's `password x`, a URL's
    password), its long lines without spaces (a PEM body) and the token-like runs of its
    lines (JSON and YAML values), each named after the file."""
    secrets: list[Secret] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("-----", "#", ";")) or _SECTION.fullmatch(line):
            continue
        words = line.split()
        candidates = [b for a, b in itertools.pairwise(words) if a in ("password", "passwd")]
        ini = _INI_LINE.match(line)
        if ini is not None:
            candidates.append(_unquote(ini.group(1)))
        if len(words) == 1 and len(line) >= 16:
            candidates.append(line)
        candidates += [t for t in _TOKEN.findall(line) if any(c.isdigit() for c in t)]
        candidates += _URL_PASSWORD.findall(line)
        secrets.extend(Secret(c, label) for c in dict.fromkeys(candidates) if len(c) >= MIN_CHARS)
        if len(secrets) >= MAX_SECRETS_PER_FILE:
            break
    return secrets


def _stat_key(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class SecretFiles:
    """The secret files of the workspace and the values they hold.

    The roots' top level is listed again whenever a root folder changes (a new .env there
    counts at once); the walk below it runs first with a small budget on the caller's
    thread (a small workspace is walked whole, before its first result), then, and every
    RESCAN_SECONDS, in `background` (a thread), so that no call waits for a big walk. A walk
    after the first lists again only the folders whose stamp changed (file_walk.py)."""

    def __init__(
        self,
        workspace: Workspace,
        names: CredentialNames,
        clock: Callable[[], float] = time.monotonic,
        background: Callable[[Callable[[], None]], None] | None = None,
        home: Path | None = None,
        shared: SharedListings | None = None,
    ) -> None:
        """`shared`: the listings the checkpoint watcher's first walk shares with the walk
        here (until the first walk here that ends)."""
        self._workspace = workspace
        self._home = home
        self._user_files = {home / name for name in USER_CREDENTIAL_FILES} if home else set()
        self._names = names
        self._clock = clock
        self._background = background or _in_a_thread
        self._walk = FileWalk(shared)
        self._shared = shared
        self._parsed: dict[Path, tuple[tuple[int, ...], list[Secret]]] = {}
        self._below: set[Path] = set()
        """The secret files the last walk found (down to MAX_DEPTH, within its budget)."""
        self._top: set[Path] = set()
        """The secret files right in the roots, as of `_roots_key`."""
        self._walked: set[Path] | None = None
        """A finished background walk's files, not yet taken."""
        self._walking = False
        self._user_checked_at = -USER_FILES_SECONDS
        self._scanned_at: float | None = None
        self._roots_key: tuple[int, ...] = ()
        self.secrets: tuple[Secret, ...] = ()
        """The current values; a new tuple only when they changed."""

    def refresh(self) -> tuple[Secret, ...]:
        now = self._clock()
        if self._scanned_at is None:
            self._scanned_at = now
            roots_key = self._roots_mtimes()
            found, complete = self._discover(FIRST_WALK_ENTRIES)
            self._below = set(found)
            if complete:  # the walk read the roots whole: their own files are in `found`
                self._roots_key = roots_key
                self._walked_once()
            else:
                self._start_walk()
        elif now - self._scanned_at >= RESCAN_SECONDS:
            self._scanned_at = now
            self._start_walk()
        walked, self._walked = self._walked, None
        if walked is not None:
            self._below = walked
        roots_key = self._roots_mtimes()
        if roots_key != self._roots_key:
            # A root changed (a new .env in it counts at once): its own entries read again,
            # once; not on a walk's return, nor on a call that finds them as they were.
            self._roots_key = roots_key
            self._top = self._top_level()
        parsed: dict[Path, tuple[tuple[int, ...], list[Secret]]] = {}
        # The user's files change seldom: looked at every USER_FILES_SECONDS, not per call.
        check_user = now - self._user_checked_at >= USER_FILES_SECONDS
        if check_user:
            self._user_checked_at = now
        for path in self._below | self._top | self._user_files:
            if check_user or path not in self._user_files:
                entry = self._parse(path)
            else:
                entry = self._parsed.get(path)
            if entry is not None:
                parsed[path] = entry
        if parsed.keys() != self._parsed.keys() or any(
            parsed[path][0] != self._parsed[path][0] for path in parsed
        ):
            self.secrets = tuple(s for _, found in parsed.values() for s in found)
        self._parsed = parsed
        return self.secrets

    def _roots_mtimes(self) -> tuple[int, ...]:
        return tuple(_mtime(root) for root in self._workspace.writable_roots())

    def _start_walk(self) -> None:
        if self._walking:
            return
        self._walking = True

        def walk() -> None:
            try:
                self._walked = set(self._discover(MAX_ENTRIES)[0])
            finally:
                self._walking = False
                self._walked_once()

        self._background(walk)

    def _walked_once(self) -> None:
        if self._shared is not None:
            self._shared.secret_walked()

    def _parse(self, path: Path) -> tuple[tuple[int, ...], list[Secret]] | None:
        try:
            st = os.lstat(path)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None  # a link is not followed: it could name any file at all
        key = _stat_key(st)
        known = self._parsed.get(path)
        if known is not None and known[0] == key:
            return known
        return key, self._read(path, st.st_size)

    def _read(self, path: Path, size: int) -> list[Secret]:
        # No link followed, no wait on a FIFO swapped in since the lstat.
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(path, flags)
        except OSError:
            return []
        try:
            data = (
                os.read(fd, min(size, MAX_FILE_BYTES))
                if stat.S_ISREG(os.fstat(fd).st_mode)
                else b""
            )
        except OSError:
            return []
        finally:
            os.close(fd)
        if b"\0" in data[:1024]:
            return []  # a binary key store (.p12): no line of it is printed as text
        text = data.decode("utf-8", "replace")
        label = self._label(path)
        if path.name == ".env" or path.name.startswith(".env."):
            return dotenv_secrets(label, text, self._names)
        return file_secrets(label, text)

    def _label(self, path: Path) -> str:
        if path in self._user_files and self._home is not None:
            return f"~/{path.relative_to(self._home).as_posix()}"
        return self._workspace.relative(path)

    def _discover(self, budget: int) -> tuple[list[Path], bool]:
        """The secret files down to the walk's depth; and whether the walk ended within
        `budget` entries (it stops at the budget, inside a folder too)."""
        roots = self._workspace.writable_roots()
        return self._walk.walk(roots, budget, self._secret_file_test(), self._walk_key(roots))

    def _top_level(self) -> set[Path]:
        """The secret files right in the roots: each root read once, entry by entry, only
        the names that could be a secret looked at (and kept for the next walk)."""
        roots = self._workspace.writable_roots()
        test, key = self._secret_file_test(), self._walk_key(roots)
        return self._walk.top_level(roots, MAX_ENTRIES, test, key)

    def _walk_key(self, roots: list[Path]) -> object:
        """What a remembered walk holds for: other roots or patterns start afresh."""
        return (tuple(roots), self._workspace.secret_patterns)

    def _secret_file_test(self) -> Callable[[os.DirEntry[str]], bool]:
        """Whether a listed entry is a secret file, for one pass: the workspace's own answer
        (~50 us), asked only for a name that could be a built-in secret unless the user
        added patterns; a regular file's type comes with the listing."""
        workspace = self._workspace
        every_name = workspace.secret_patterns != SECRET_PATTERNS

        def test(entry: os.DirEntry[str]) -> bool:
            return (
                (every_name or _maybe_secret(entry.path))
                and entry.is_file(follow_symlinks=False)
                and workspace.is_secret(Path(entry.path))
            )

        return test


def _maybe_secret(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return (
        name.startswith((".env", "id_"))
        or name.endswith((".pem", ".key", ".p12", ".pfx"))
        or name in (".netrc", ".git-credentials", ".npmrc", ".pypirc", "credentials")
        or "/.ssh/" in path
        or "/.gnupg/" in path
    )


def _in_a_thread(work: Callable[[], None]) -> None:
    threading.Thread(target=work, name="secret-files-walk", daemon=True).start()


def _exists(path: str) -> bool:
    try:
        return os.path.lexists(path)
    except (OSError, ValueError):
        return False


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0
