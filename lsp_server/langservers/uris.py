"""file: URIs <-> paths. Servers percent-encode differently; compare via paths."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse


def path_to_uri(path: Path) -> str:
    return path.as_uri()


def uri_to_path(uri: str) -> Path | None:
    """The local path of a file: URI, None for any other scheme (untitled:, jdt: ...)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))
