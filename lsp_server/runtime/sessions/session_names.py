"""Session ids (and workspace roots) as names on disk and in result refs.

A session id is whatever a client sends: `../x`, `a/b`, a NUL, a lone surrogate. Used raw as
a folder name it would escape or break the state folder, and printed raw in a ref it would
break the output's encoding. So the name on disk is always a readable prefix of safe
characters plus a hash of the exact id (`a_b~3f1c...`): one folder per id, never a path.
"""

from __future__ import annotations

import hashlib
import re

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
# Ids that already read well in a ref stay as they are (`r-cli-3`); `~` marks an encoded
# one, and a plain id cannot contain `~`, so the two never collide.
_PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
PREFIX_CHARS = 32


def digest(text: str) -> str:
    """The sha256 of the exact text (lone surrogates included, so distinct ids stay apart)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def file_name(text: str, label: str | None = None) -> str:
    """A single, safe path component for any text: a readable prefix (of `label`, else of
    the text), `~`, then 16 hex digits of the text's hash."""
    readable = text if label is None else label
    prefix = _UNSAFE.sub("_", readable[:PREFIX_CHARS]).lstrip(".") or "session"
    return f"{prefix}~{digest(text)[:16]}"


def ref_token(session_id: str) -> str:
    """What a result ref says about its session: the id itself when it is plain."""
    return session_id if _PLAIN_ID.fullmatch(session_id) else file_name(session_id)
