"""`toolhost mcp` driven by the official SDK's ClientSession over stdio_client."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
import os
import re
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError
from PIL import Image

from lsp_server.tools.registry import build_registry
from tests.mcp.clients import mcp_session, structured, text_of

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("modern", [False, True], ids=["2025-11-25", "2026-07-28"])
async def test_both_revisions_list_the_contract(ws: Path, modern: bool) -> None:
    async with mcp_session(ws, modern=modern) as session:
        assert session.protocol_version == ("2026-07-28" if modern else "2025-11-25")
        listed = (await session.list_tools()).tools
        read = await session.call_tool("read_file", {"path": "hello.txt"})
    contract = {tool.name: tool.contract for tool in build_registry().surface("full")}
    generated = {
        t["name"]: t for t in json.loads((REPO / "schemas/tools.json").read_text())["tools"]
    }
    assert [tool.name for tool in listed] == sorted(contract)
    for tool in listed:
        entry = contract[tool.name]
        assert tool.input_schema == generated[tool.name]["inputSchema"]
        assert tool.description == entry.description
        annotations = tool.annotations.model_dump(by_alias=True, exclude_none=True)
        assert annotations == entry.annotations() == generated[tool.name]["annotations"]
    hints = {tool.name: tool.annotations for tool in listed}
    assert hints["read_file"].read_only_hint is True
    assert hints["bash"].destructive_hint is True and hints["bash"].open_world_hint is True
    assert hints["web_fetch"].open_world_hint is True
    assert hints["edit_file"].read_only_hint is False
    assert read.is_error is False
    assert "hello from the fixture" in text_of(read)


async def test_schema_keys_survive_byte_for_byte(ws: Path) -> None:
    """`$schema` and every keyword arrive as in schemas/tools.json (no renaming, no loss)."""
    async with mcp_session(ws) as session:
        listed = (await session.list_tools()).tools
    for tool in listed:
        assert tool.input_schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


async def test_unobserved_edit_and_schema_mismatch_are_structured(ws: Path) -> None:
    async with mcp_session(ws) as session:
        edit = await session.call_tool(
            "edit_file", {"path": "notes.md", "old_string": "three", "new_string": "3"}
        )
        wrong = await session.call_tool("read_file", {"paht": "notes.md"})
        with pytest.raises(MCPError) as unknown:
            await session.call_tool("read_fil", {"path": "notes.md"})
    assert edit.is_error is True
    error = structured(edit)
    assert error["code"] == "FS_NOT_OBSERVED"
    assert error["recovery"] and error["message"].startswith("FS_NOT_OBSERVED: ")
    assert text_of(edit) == error["message"]
    assert (ws / "notes.md").read_text() == "# Notes\n\nline three\n"
    mismatch = structured(wrong)
    assert wrong.is_error is True and mismatch["code"] == "schema_mismatch"
    assert mismatch["signature"]
    assert any(
        v.get("keyword") == "additionalProperties" or "paht" in json.dumps(v)
        for v in mismatch["violations"]
    )
    assert mismatch["recovery"] == "fix the listed parameters and call again"
    # Revision 2025-11-25: an unknown tool is a JSON-RPC error, near names in `data`.
    assert unknown.value.error.code == -32602
    assert "Unknown tool: 'read_fil'" in unknown.value.error.message
    assert unknown.value.error.data["closest"][0] == "read_file"
    assert edit.meta["toolhost"]["runtime"] == "local"


async def test_view_image_is_image_content(ws: Path) -> None:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 6), (200, 10, 10)).save(buffer, "PNG")
    (ws / "red.png").write_bytes(buffer.getvalue())
    async with mcp_session(ws) as session:
        result = await session.call_tool("view_image", {"path": "red.png"})
    assert result.is_error is False
    images = [part for part in result.content if part.type == "image"]
    assert len(images) == 1 and images[0].mime_type == "image/png"
    decoded = Image.open(io.BytesIO(base64.b64decode(images[0].data)))
    assert decoded.size == (8, 6)


async def test_truncated_result_pages_back_to_the_whole(ws: Path, bypass_policy: None) -> None:
    async with mcp_session(ws) as session:
        result = await session.call_tool(
            "bash", {"command": "seq 1 200000", "description": "count"}
        )
        assert result.is_error is False
        meta = result.meta["toolhost"]
        assert meta["truncated"] is True
        ref = meta["resultRef"]
        text = text_of(result)
        # The text alone says exactly how to get the rest.
        assert f"result_ref {ref};" in text and '"id": "session:tool_result"' in text
        pieces: list[str] = []
        offset, digest = 0, None
        for _ in range(400):
            page = await session.call_tool(
                "use_capability",
                {
                    "action": "call",
                    "id": "session:tool_result",
                    "arguments": {"result_ref": ref, "offset": offset},
                },
            )
            header, _, body = text_of(page).partition("\n")
            pieces.append(body)
            digest = re.search(r"sha256 ([0-9a-f]{64})", header).group(1)  # type: ignore[union-attr]
            more = re.search(r"offset=(\d+)", header)
            if more is None:
                assert "complete" in header
                break
            offset = int(more.group(1))
    whole = "".join(pieces)
    assert hashlib.sha256(whole.encode()).hexdigest() == digest
    assert "\n".join(str(n) for n in range(1, 200001)) in whole


@pytest.mark.slow
async def test_progress_arrives_during_a_long_bash(ws: Path, bypass_policy: None) -> None:
    seen: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    command = "for i in 1 2 3 4; do echo step$i; sleep 0.3; done"
    async with mcp_session(ws) as session:
        result = await session.call_tool(
            "bash", {"command": command, "description": "steps"}, progress_callback=on_progress
        )
    assert result.is_error is False
    assert any("step" in (message or "") for _, message in seen), seen
    assert [p for p, _ in seen] == sorted(p for p, _ in seen)


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline and "pytest" not in cmdline:
            found.append(int(entry.name))
    return found


async def _wait_gone(marker: str) -> list[int]:
    for _ in range(100):
        alive = _processes_with(marker)
        if not alive:
            return []
        await asyncio.sleep(0.1)
    return _processes_with(marker)


@pytest.mark.parametrize("how", ["cancelled", "stream closed"])
async def test_cancellation_kills_the_command(ws: Path, bypass_policy: None, how: str) -> None:
    marker = f"{os.getpid() % 1000 + 7000}.{len(how)}"
    command = f"echo started > started.txt; sleep {marker}"
    async with mcp_session(ws) as session:
        call = asyncio.create_task(
            session.call_tool("bash", {"command": command, "description": "wait"})
        )
        for _ in range(200):
            if (ws / "started.txt").exists() and _processes_with(f"sleep {marker}"):
                break
            await asyncio.sleep(0.05)
        assert _processes_with(f"sleep {marker}"), "the command never started"
        if how == "cancelled":
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            assert await _wait_gone(f"sleep {marker}") == []
            # The server lives on.
            after = await session.call_tool("read_file", {"path": "hello.txt"})
            assert after.is_error is False
    if how == "stream closed":
        call.cancel()
    assert await _wait_gone(f"sleep {marker}") == []


async def test_edit_without_elicitation_is_refused_naming_what_allows_it(ws: Path) -> None:
    async with mcp_session(ws) as session:
        await session.call_tool("read_file", {"path": "notes.md"})
        result = await session.call_tool(
            "edit_file", {"path": "notes.md", "old_string": "three", "new_string": "3"}
        )
    assert result.is_error is True
    assert structured(result)["code"] == "permission.unattended"
    text = text_of(result)
    # The text names what would allow it: the rule to add, or the setting.
    assert 'allow rule such as "' in text and 'policy.unattended = "allow"' in text
    assert "MCP elicitation" in text
    assert (ws / "notes.md").read_text() == "# Notes\n\nline three\n"
