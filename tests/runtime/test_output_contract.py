"""The output contract: bounded text, truthful meta, full text paged back by resultRef."""

from __future__ import annotations

import hashlib
from pathlib import Path

from lsp_server.runtime.results.bounding import bound_text
from lsp_server.runtime.sessions.stored_results import ResultStore
from tests.helpers import lsp_call, lsp_session, text_of


def test_bound_text_says_exactly_what_was_left_out() -> None:
    text = "".join(f"line {i:05d}\n" for i in range(10_000))
    bounded = bound_text(text, 30_000)
    assert bounded.truncated and bounded.total_chars == len(text)
    assert bounded.shown_chars == len(bounded.text) <= 30_000
    marker = next(line for line in bounded.text.splitlines() if line.startswith("[..."))
    omitted_lines = int(marker.split()[1])
    omitted_chars = int(marker.split("(")[1].split()[0])
    shown_lines = [line for line in bounded.text.splitlines() if line.startswith("line ")]
    assert omitted_lines + len(shown_lines) == 10_000
    assert omitted_chars == omitted_lines * len("line 00000\n")
    assert not bound_text("short", 100).truncated


def test_pages_never_split_a_character(tmp_path: Path) -> None:
    store = ResultStore("s", 4, tmp_path)
    text = "aé😀中" * 5000
    ref = store.store(text)
    data = text.encode()
    pieces = []
    offset: int | None = 0
    while offset is not None:
        page = store.page(ref, offset, 1001)
        pieces.append(page.text.encode())
        assert page.sha256 == hashlib.sha256(data).hexdigest()
        offset = page.next_offset
    assert b"".join(pieces) == data


async def test_large_read_is_bounded_and_paged_back(workspace: Path) -> None:
    big = "".join(f"row {i:06d} {'é' * 40}\n" for i in range(3000))
    (workspace / "big.txt").write_text(big)
    async with lsp_session(workspace) as client:
        result = await lsp_call(client, "read_file", {"path": "big.txt"})
        meta = result["meta"]
        assert meta["truncated"] is True
        assert meta["shownChars"] == len(text_of(result)) <= 30_000
        assert meta["totalChars"] > meta["shownChars"]
        ref = meta["resultRef"]
        pieces = []
        offset = 0
        while True:
            page = await client.protocol.send_request_async(
                "toolhost/result", {"resultRef": ref, "offset": offset, "limit": 24576}
            )
            pieces.append(page["text"])
            if page["complete"]:
                break
            offset = page["nextOffset"]
        full = "".join(pieces)
    assert len(full) == meta["totalChars"]
    assert hashlib.sha256(full.encode()).hexdigest() == page["sha256"]
    lines = full.splitlines()
    assert lines[1999].endswith("2000→row 001999 " + "é" * 40)
    assert lines[2000].startswith("[PARTIAL view: lines 1-2000 of 3000")


async def test_small_results_are_not_truncated(workspace: Path) -> None:
    async with lsp_session(workspace) as client:
        result = await lsp_call(client, "read_file", {"path": "README.md"})
    meta = result["meta"]
    assert meta["truncated"] is False and meta["resultRef"] is None
    assert meta["shownChars"] == meta["totalChars"] == len(text_of(result))
