"""The id of a JSON-RPC request that cannot be parsed (not JSON, nested too deeply, too
long to read whole), read from the head of its bytes, so that its error answers the
request the client waits on instead of nobody (every face: LSP, MCP and ACP).

Only an `"id":` member with a number or a string counts; the first one in the head wins
(a request puts its id before its params in every client we know of).
"""

from __future__ import annotations

import json
import re

HEAD_BYTES = 4096
"""How much of a message is searched for its id."""

ID_MEMBER = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')


def request_id(data: bytes) -> int | str | None:
    """The id of an unparsable message, when its first HEAD_BYTES show one."""
    match = ID_MEMBER.search(data[:HEAD_BYTES])
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, int | str) and not isinstance(value, bool) else None
