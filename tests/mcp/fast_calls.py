"""The calls tests/mcp/test_fast.py and test_fast_modern.py send through the front's call path
(mcp/stdio/fast.py) and through the SDK, and what differs between two runs of them."""

from __future__ import annotations

import asyncio
import base64
import re
from pathlib import Path
from typing import Any

from tests.mcp.clients import RawMcp

CLIENT = {"name": "fast-test", "version": "1"}
# A 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
ALLOW = {"result": {"action": "accept", "content": {"decision": "allow_once"}}}
DECLINE = {"result": {"action": "decline"}}
UNREADABLE = {"result": {"action": "maybe"}}
# (id, params, the answer to an approval form it asks for)
CALLS: list[tuple[Any, dict[str, Any], dict[str, Any]]] = [
    ("r1", {"name": "read_file", "arguments": {"path": "hello.txt"}}, ALLOW),
    (2, {"name": "read_file", "arguments": {"path": "missing.txt"}}, ALLOW),
    (3, {"name": "read_file", "arguments": {"path": 3}}, ALLOW),
    (4, {"name": "read_fil", "arguments": {"path": "hello.txt"}}, ALLOW),
    (5, {"name": "read_file"}, ALLOW),
    (6, {"name": "read_file", "arguments": {"path": "notes.md"}, "_meta": {"x/id": "t1"}}, ALLOW),
    (
        7,
        {
            "name": "edit_file",
            "arguments": {"path": "notes.md", "old_string": "three", "new_string": "3"},
        },
        ALLOW,
    ),
    (8, {"name": "write_file", "arguments": {"path": "new.txt", "content": "x\n"}}, DECLINE),
    (9, {"name": "write_file", "arguments": {"path": "new2.txt", "content": "é\n"}}, UNREADABLE),
    (10, {"name": "glob", "arguments": {"pattern": "*.md"}}, ALLOW),
    (11, {"name": "grep", "arguments": {"pattern": "line"}}, ALLOW),
    (12, {"name": "read_file", "arguments": {"path": "big.txt"}}, ALLOW),
    (13, {"name": "view_image", "arguments": {"path": "dot.png"}}, ALLOW),
    ("14", {"name": "bash", "arguments": {"command": "echo hi; exit 3"}}, ALLOW),
    (
        15,
        {
            "name": "bash",
            # One line, then a pause longer than two of the runner's half-second progress
            # ticks: one notifications/progress with that line.
            "arguments": {"command": "echo step one; sleep 1.5"},
            "_meta": {"progressToken": "p15"},
        },
        ALLOW,
    ),
    (16, {"name": "ls", "arguments": {}, "_meta": {"progressToken": 0}}, ALLOW),
]
# What differs between two runs of the same calls.
VOLATILE = [
    (re.compile(rb'"durationMs":[0-9.e+-]+'), b'"durationMs":0'),
    (re.compile(rb"\bc-[0-9a-f]{12}\b"), b"c-CALL"),
    (re.compile(rb'"resultRef":"[^"]+"'), b'"resultRef":"REF"'),
    (re.compile(rb"\b[0-9]+ ms after it was sent"), b"N ms after it was sent"),
    # ... whose digits change the text's length.
    (re.compile(rb'"(shown|total)Chars":[0-9]+'), rb'"\1Chars":0'),
    (re.compile(rb"result_ref '[^']+'|\\\"result_ref\\\": \\\"[^\\\"]+\\\""), b"REF"),
]


def workspace(root: Path) -> None:
    for child in root.iterdir():
        if child.is_file():
            child.unlink()
    (root / "hello.txt").write_text("hello from the fixture\n", encoding="utf-8")
    (root / "notes.md").write_text("# Notes\n\nline three\n", encoding="utf-8")
    (root / "big.txt").write_text("".join(f"line {n} of many\n" for n in range(40_000)))
    (root / "dot.png").write_bytes(PNG)


async def line_of(client: RawMcp) -> bytes:
    assert client.process.stdout is not None
    line = await asyncio.wait_for(client.process.stdout.readline(), 120)  # a bound, not timing
    assert line, "the MCP server closed its output: it died"
    return line


def masked(lines: list[bytes], volatile: list[tuple[re.Pattern[bytes], bytes]]) -> list[bytes]:
    """The lines with what differs between two runs of the same calls replaced."""
    for pattern, replacement in volatile:
        lines = [pattern.sub(replacement, line) for line in lines]
    return lines
