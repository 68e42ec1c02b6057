"""JSON as bytes, for what toolhost writes on every call (the LSP wire, the audit log).

orjson once something has loaded it (`load`; `toolhost serve`'s warm-up does, after the
initialize answer): a 4 KiB read's answer in under a microsecond, against 14 with the
standard library. The standard library until then, and for what orjson refuses: a lone
surrogate (a file name that is not UTF-8; escaped as `\\udcxx`), an integer over 64 bits,
a key that is not a string. Both are UTF-8 JSON; orjson's is compact and writes
non-ASCII text as it is.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

_fast: Callable[..., bytes] | None = None


def load() -> None:
    """Use orjson from now on (when it cannot be imported, the standard library stays)."""
    global _fast
    try:
        import orjson
    except ImportError:
        return
    _fast = orjson.dumps


def loaded_dumps() -> Callable[..., bytes] | None:
    """orjson's encoder once `load` has run, else None: for a wire that falls back on its
    own terms (it raises TypeError on what only the standard library writes)."""
    return _fast


def encode(data: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    """`data` as JSON; `default` turns what JSON has no type for into what it has."""
    if _fast is not None:
        try:
            return _fast(data, default=default)
        except TypeError:  # orjson.JSONEncodeError: what only the standard library writes
            pass
    return json.dumps(data, default=default).encode("utf-8")
