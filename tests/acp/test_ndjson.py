"""ACP's line framing: any length of line, bad lines reported one by one, and the id of an
overlong request found so that it can be answered."""

from __future__ import annotations

import asyncio

from lsp_server.acp.ndjson import LineReader, Malformed


def _read_all(data: bytes, limit: int) -> list[object]:
    async def go() -> list[object]:
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        reader.feed_eof()
        lines = LineReader(reader, limit)
        found: list[object] = []
        while (message := await lines.next()) is not None:
            found.append(message)
        return found

    return asyncio.run(go())


def test_messages_bad_lines_and_an_overlong_request() -> None:
    overlong = (
        b'{"jsonrpc": "2.0", "id": 42, "method": "fs/write_text_file", "params": "'
        + (b"x" * 5000)
        + b'"}'
    )
    data = b"\n".join(
        [
            b'{"jsonrpc": "2.0", "id": 1, "method": "initialize"}',
            b"",
            b"not json",
            overlong,
            b'[{"jsonrpc": "2.0"}]',
            b'{"jsonrpc": "2.0", "method": 5}',
            b'{"id": 9, "method": "initialize"}',
            b'{"jsonrpc": "2.0", "id": "a", "result": {}}',
        ]
    )
    first, bad, long, batch, method, unversioned, last = _read_all(data, limit=1000)
    assert first == {"jsonrpc": "2.0", "id": 1, "method": "initialize"}
    assert isinstance(bad, Malformed) and bad.reason.startswith("not JSON")
    assert isinstance(long, Malformed) and long.request_id == 42
    assert "over 1000 bytes" in long.reason
    assert isinstance(batch, Malformed) and isinstance(method, Malformed)
    assert method.request_id is None  # a notification: nobody to answer
    assert isinstance(unversioned, Malformed) and unversioned.request_id == 9
    assert last == {"jsonrpc": "2.0", "id": "a", "result": {}}


def test_a_long_line_within_the_limit_and_a_last_line_without_newline() -> None:
    content = "é" * 300_000  # longer than asyncio's 64 KiB readline limit
    data = ('{"jsonrpc": "2.0", "id": 2, "result": "' + content + '"}\n').encode()
    data += b'{"jsonrpc": "2.0", "id": 3, "result": null}'
    long, last = _read_all(data, limit=10_000_000)
    assert isinstance(long, dict) and long["result"] == content
    assert last == {"jsonrpc": "2.0", "id": 3, "result": None}
