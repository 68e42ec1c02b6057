"""The one path <-> URI helper (pygls' URI utilities underneath). Everything that turns a
URI into a path or back goes through here: server roots, editor buffers, watched files,
child language servers. A leaf module (imports nothing of toolhost), so the engines may
use it too. Servers percent-encode differently: compare via paths."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from pygls.uris import to_fs_path


def path_to_uri(path: Path) -> str:
    return path.as_uri()


def uri_to_path(uri: str) -> Path | None:
    """The local path of a file: URI, None for any other scheme (untitled:, jdt: ...)."""
    if urlparse(uri).scheme != "file":
        return None
    fs_path = to_fs_path(uri)
    return Path(fs_path) if fs_path else None


def document_key(uri: str) -> str:
    """The key pygls keeps an open document under (the URI, percent-decoded)."""
    return unquote(uri)


def normalize_uri(uri: str) -> str:
    """Servers spell file URIs differently (%3A, trailing slashes, lower-case drive):
    round-trip through a path so that keys compare equal."""
    path = uri_to_path(uri)
    return path_to_uri(path) if path is not None else uri
