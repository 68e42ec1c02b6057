"""json_bytes: orjson's bytes once loaded, the standard library's for what orjson refuses."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import attrs
import pytest

from lsp_server.wire import json_bytes


@pytest.fixture
def loaded() -> Iterator[None]:
    before = json_bytes._fast
    json_bytes.load()
    yield
    json_bytes._fast = before


@attrs.define
class Meta:
    paths: list[str]


def unstructure(value: Any) -> Any:
    return attrs.asdict(value)


@pytest.mark.parametrize(
    "data",
    [
        {"text": "naïve → café 🦊", "n": 1, "ok": True, "none": None, "x": 0.5},
        {"path": "/ws/caf\udce9.txt"},  # a lone surrogate: a name that is not UTF-8
        {"big": 2**70},
        {1: "a key that is not a string"},
        {"meta": Meta(["/ws/a"])},
    ],
)
def test_every_value_reads_back_as_the_standard_librarys(loaded: None, data: Any) -> None:
    fast = json_bytes.encode(data, unstructure)
    slow = json.dumps(data, default=unstructure).encode("utf-8")
    assert json.loads(fast) == json.loads(slow)


def test_orjson_writes_once_loaded_and_the_standard_library_the_rest(loaded: None) -> None:
    assert json_bytes.encode({"a": "→"}) == '{"a":"→"}'.encode()
    assert json_bytes.encode({"a": "\udce9"}) == b'{"a": "\\udce9"}'


def test_the_standard_library_until_loaded() -> None:
    before, json_bytes._fast = json_bytes._fast, None
    try:
        assert json_bytes.encode({"a": "→"}) == b'{"a": "\\u2192"}'
    finally:
        json_bytes._fast = before
