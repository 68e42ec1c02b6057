"""Where the known secret values come from: the server's environment (credential names,
names.py), the workspace's `.env` files (KEY=VALUE lines) and the other files readers
refuse as secrets (`*.pem`, `*.key`, `id_*`, `.netrc` ...: their long lines and values).

Files are found by a bounded walk of the roots, done again when a root folder changes or
RESCAN_SECONDS after the last one; a found file is parsed again only when its stat changes.
"""

from __future__ import annotations

import itertools
import os
import re
import stat
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_server.secrets.names import CredentialNames
from lsp_server.secrets.redaction import MIN_CHARS, Secret

if TYPE_CHECKING:
    from lsp_server.runtime.fs.workspace import Workspace

RESCAN_SECONDS = 10.0
MAX_DEPTH = 4
MAX_ENTRIES = 20_000
MAX_FILE_BYTES = 256 * 1024
MAX_SECRETS_PER_FILE = 2_000
# Folders no secret file of the project lives in, and the biggest ones to walk.
SKIPPED_FOLDERS = frozenset(
    {".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".tox", "target"}
)

_DOTENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*[=:]\s*(.*?)\s*$")
_INI_LINE = re.compile(r"^\s*[^\s=#;]+\s*=\s*(.+?)\s*$")
_PLAIN = re.compile(
    r"[A-Za-z]+(?:[-_. ][A-Za-z]+)*|[0-9.]+|(?:[a-z][a-z0-9+.-]*://[^@\s]*)|/[^\s]*"
)
_URL_PASSWORD = re.compile(r"://[^\s/@:]*:([^\s/@]+)@")


def environment_secrets(env: Mapping[str, str], names: CredentialNames) -> list[Secret]:
    secrets: list[Secret] = []
    for name, value in names.credentials(env).items():
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
    """A key or credentials file: its values (`k = v`, netrc's `password x`) and its long
    lines without spaces (a PEM body, a token), each named after the file."""
    secrets: list[Secret] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("-----", "#", ";", "[")):
            continue
        ini = _INI_LINE.match(line)
        words = line.split()
        if ini is not None:
            candidates = [_unquote(ini.group(1))]
        elif len(words) == 1:
            candidates = [line] if len(line) >= 16 else []
        else:
            after = [b for a, b in itertools.pairwise(words) if a == "password"]
            candidates = after + [word for word in words if len(word) >= 20]
        secrets.extend(Secret(c, label) for c in candidates if len(c) >= MIN_CHARS)
        if len(secrets) >= MAX_SECRETS_PER_FILE:
            break
    return secrets


def _stat_key(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class SecretFiles:
    """The secret files of the workspace and the values they hold."""

    def __init__(
        self,
        workspace: Workspace,
        names: CredentialNames,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._workspace = workspace
        self._names = names
        self._clock = clock
        self._parsed: dict[Path, tuple[tuple[int, ...], list[Secret]]] = {}
        self._scanned_at: float | None = None
        self._roots_key: tuple[int, ...] = ()
        self.secrets: tuple[Secret, ...] = ()
        """The current values; a new tuple only when they changed."""

    def refresh(self) -> tuple[Secret, ...]:
        roots_key = tuple(_mtime(root) for root in self._workspace.roots)
        now = self._clock()
        stale = self._scanned_at is None or now - self._scanned_at >= RESCAN_SECONDS
        if stale or roots_key != self._roots_key:
            self._scanned_at, self._roots_key = now, roots_key
            paths = list(self._discover())
        else:
            paths = list(self._parsed)
        parsed: dict[Path, tuple[tuple[int, ...], list[Secret]]] = {}
        for path in paths:
            entry = self._parse(path)
            if entry is not None:
                parsed[path] = entry
        if parsed.keys() != self._parsed.keys() or any(
            parsed[path][0] != self._parsed[path][0] for path in parsed
        ):
            self.secrets = tuple(s for _, found in parsed.values() for s in found)
        self._parsed = parsed
        return self.secrets

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
        label = self._workspace.relative(path)
        if path.name == ".env" or path.name.startswith(".env."):
            return dotenv_secrets(label, text, self._names)
        return file_secrets(label, text)

    def _discover(self) -> Iterator[Path]:
        budget = MAX_ENTRIES
        for root in self._workspace.roots:
            pending = [(root, 0)]
            while pending and budget > 0:
                folder, depth = pending.pop()
                try:
                    with os.scandir(folder) as entries:
                        listed = list(entries)
                except OSError:
                    continue
                budget -= len(listed)
                for entry in listed:
                    path = Path(entry.path)
                    if entry.is_dir(follow_symlinks=False):
                        if depth < MAX_DEPTH and entry.name not in SKIPPED_FOLDERS:
                            pending.append((path, depth + 1))
                    elif entry.is_file(follow_symlinks=False) and self._workspace.is_secret(path):
                        yield path


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0
