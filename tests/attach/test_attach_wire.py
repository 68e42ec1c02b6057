"""A call's answer on the attach socket (attach/wire.py): orjson writes it once the
editor's `toolhost serve` has loaded it, as its LSP face writes the same result; the
standard library before that and for what orjson refuses. Either way `toolhost mcp` reads
the same message."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from lsp_server.attach import wire
from lsp_server.wire import json_bytes


@pytest.fixture(params=[True, False], ids=["orjson-loaded", "standard-library"])
def orjson_loaded(request: pytest.FixtureRequest) -> Iterator[bool]:
    before, json_bytes._fast = json_bytes._fast, None
    if request.param:
        json_bytes.load()
    yield bool(request.param)
    json_bytes._fast = before


READ_ANSWER: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 7,
    "result": {
        "callId": "c-1",
        "isError": False,
        "content": [{"type": "text", "text": '     1→naïve → café 🦊\n     2→\t\\ " \x1b'}],
        "meta": {"tool": "read_file", "durationMs": 0.123, "paths": ["/ws/a.txt"]},
    },
}


def line_read(data: bytes) -> Any:
    assert data.endswith(b"\n") and b"\n" not in data[:-1]
    return json.loads(data)


@pytest.mark.parametrize(
    "message",
    [
        READ_ANSWER,
        {"jsonrpc": "2.0", "id": 1, "result": {"big": 2**70, "small": -(2**63)}},
        {"jsonrpc": "2.0", "id": 2, "result": {1: "a key that is not a string"}},
    ],
)
def test_an_answer_reads_back_as_the_message(orjson_loaded: bool, message: dict[str, Any]) -> None:
    assert line_read(wire.encode_answer(message)) == json.loads(json.dumps(message))


def test_orjson_writes_an_answer_once_loaded(orjson_loaded: bool) -> None:
    standard = wire.encode(READ_ANSWER)
    assert wire.encode_answer(READ_ANSWER) == (
        orjson.dumps(READ_ANSWER) + b"\n" if orjson_loaded else standard
    )


@pytest.mark.parametrize("odd", ["/ws/caf\udce9.txt", "\ud800", "naïve \udfff"])
def test_a_lone_surrogate_reads_back_as_itself(orjson_loaded: bool, odd: str) -> None:
    """A file name that is not UTF-8, a client's argument with a lone surrogate: orjson
    refuses it, and `encode` writes `\\uXXXX` escapes (valid UTF-8) that read back as the
    same string. Its raw surrogateescape bytes (\\xe9) were not UTF-8: the reader failed on
    them and `toolhost mcp` lost its connection to the editor; "\\ud800" raised."""
    message = {"jsonrpc": "2.0", "id": 3, "result": {"path": odd}}
    assert wire.encode_answer(message) == wire.encode(message)
    line = wire.encode(message)
    assert line.isascii()
    assert line_read(line) == message
