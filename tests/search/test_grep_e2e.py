"""A grep whose raw result is megabytes, end to end over stdio: `toolhost serve` under
pytest-lsp, the result bounded with true totals, and the full text paged back."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path
from typing import Any

from tests.helpers import lsp_call, lsp_session


def minified_tree(root: Path) -> None:
    root.mkdir()
    line = "function f(){return needle+1};" * 40  # 1200 characters, 40 matches
    for i in range(40):
        (root / f"bundle{i:02}.min.js").write_text((line + "\n") * 150)


async def page_all(client: Any, ref: str) -> tuple[str, dict[str, Any]]:
    chunks: list[str] = []
    offset: int | None = 0
    page: dict[str, Any] = {}
    while offset is not None:
        page = await client.protocol.send_request_async(
            "toolhost/result", {"resultRef": ref, "offset": offset, "limit": 1 << 20}
        )
        chunks.append(page["text"])
        offset = page["nextOffset"]
    return "".join(chunks), page


async def test_megabytes_of_matches_are_bounded_and_pageable(tmp_path: Path, rg_path: Path) -> None:
    root = tmp_path / "ws"
    minified_tree(root)
    raw = subprocess.run(
        [str(rg_path), "-n", "needle"],
        cwd=root,
        capture_output=True,
        check=True,
        stdin=subprocess.DEVNULL,
    ).stdout
    assert len(raw) > 5_000_000  # what plain rg would pour into the conversation

    async with lsp_session(root) as client:
        result = await lsp_call(client, "grep", {"pattern": "needle", "max_results": 2000})
        meta = result["meta"]
        assert result["isError"] is False
        assert meta["truncated"] is True
        assert meta["shownChars"] <= 30_000 < meta["totalChars"]
        shown = "".join(part["text"] for part in result["content"] if part["type"] == "text")
        # The cut text says where the rest is and how to page it.
        assert f"result_ref {meta['resultRef']};" in shown
        full, last_page = await page_all(client, meta["resultRef"])

    assert len(full) == meta["totalChars"]
    assert hashlib.sha256(full.encode()).hexdigest() == last_page["sha256"]
    rows = full.splitlines()
    assert len(rows) == 2001
    assert rows[0].startswith("bundle00.min.js:1:function f(){return needle+1};")
    assert (
        " [... 850 chars of this line left out: read_file offset=0 limit=1 shows the line"
        in (rows[0])
    )
    assert rows[-1].startswith("[showing 2000 of 6000 matching lines in 40 files")
    # The tail of the shown text carries the same true totals, above the paging note.
    assert shown.rstrip().rpartition("\n[cut to fit:")[0].endswith(rows[-1])
