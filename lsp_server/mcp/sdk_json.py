"""MCP messages as the SDK writes them (pydantic's compact UTF-8 JSON), for the answers the
front writes itself (mcp/stdio: fast.py, front.py, stdio_streams.py); a message holding a
lone surrogate, which no UTF-8 encoder writes, as ASCII JSON with `\\uXXXX` escapes."""

from __future__ import annotations

import json
import sys
from typing import Any


def encode(message: Any) -> bytes:
    """`message` as the SDK writes it (pydantic's compact UTF-8 JSON): pydantic's encoder once
    the SDK loaded it (a fifth of the standard library's time on a read's 4 KiB of text),
    before that the standard library's where the two agree."""
    to_json = _loaded_to_json()
    if to_json is None:
        if _plain(message):
            try:
                return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
            except (UnicodeEncodeError, ValueError):  # a lone surrogate, a circular reference
                pass
        from pydantic_core import to_json
    try:
        encoded: bytes = to_json(message)
    except ValueError:  # PydanticSerializationError: a lone surrogate (an id, a file name)
        return escaped(message)
    return encoded


def escaped(message: Any) -> bytes:
    """`message` as ASCII JSON, every character past ASCII as a `\\uXXXX` escape: what no
    UTF-8 encoder writes (a lone surrogate, from a client's id or a file name that is not
    UTF-8) still goes out as valid UTF-8, and an id the client wrote with a lone surrogate
    comes back as the same escape, so that the client finds the request it answers
    (U+FFFD in its place would leave that request waiting for ever)."""
    text = json.dumps(message, ensure_ascii=True, separators=(",", ":"), default=str)
    return text.encode("ascii")


def _loaded_to_json() -> Any:
    """pydantic_core's `to_json` once imported (by the SDK, loading in the background)."""
    return getattr(sys.modules.get("pydantic_core"), "to_json", None)


def _plain(value: Any) -> bool:
    """No float that the two encoders write differently: Python writes an exponent below
    1e-4 and from 1e16 on, pydantic at other bounds; both write NaN and Infinity their way."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            continue
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, float) and not (item == 0 or 1e-4 <= abs(item) < 1e16):
            return False
    return True


def lone_surrogate(value: Any) -> bool:
    """Whether a string in `value` (keys included) holds a lone surrogate."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def writable(value: Any) -> Any:
    """`value` as pydantic can write it (the SDK's own answers, over HTTP above all): a lone
    surrogate from a name that is not UTF-8 as `\\xNN`, as search results show such bytes,
    any other as `\\udNNN`. Unchanged (the same object) when it holds none."""
    if not lone_surrogate(value):
        return value
    if isinstance(value, str):
        try:
            raw = value.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return raw.decode("utf-8", "backslashreplace")
    if isinstance(value, dict):
        return {writable(key): writable(item) for key, item in value.items()}
    return [writable(item) for item in value]
