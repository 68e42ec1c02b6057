"""What an agent trips over: paths after `cd`, and truncated text that names the way to
the rest."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.helpers import call_tool, lsp_call, lsp_session, make_runtime, text_of


async def test_paths_stay_workspace_relative_after_cd(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    runtime = make_runtime(root)
    moved = await call_tool(runtime, "bash", {"command": "cd pkg && pwd"})
    assert text_of(moved).startswith(str(root / "pkg"))
    written = await call_tool(runtime, "write_file", {"path": "pkg/new.py", "content": "x = 1\n"})
    assert not written.is_error, text_of(written)
    assert (root / "pkg" / "new.py").read_text() == "x = 1\n"
    assert not (root / "pkg" / "pkg").exists()
    read = await call_tool(runtime, "read_file", {"path": "pkg/new.py"})
    assert "x = 1" in text_of(read)


async def test_cut_text_names_its_result_ref_and_the_exact_paging_call(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    runtime = make_runtime(root)
    result = await call_tool(runtime, "bash", {"command": "seq 1 200000"})
    ref = result.meta.result_ref
    assert result.meta.truncated and ref is not None
    text = text_of(result)
    # The call starts where the text left out lines: the marker says that offset too.
    marker = re.search(r"omitted; result_ref (\S+); from offset (\d+) \(paging call below\)", text)
    assert marker and marker[1] == ref
    offset = int(marker[2])
    call = (
        '{"id": "session:tool_result", "action": "call", '
        f'"arguments": {{"result_ref": "{ref}", "offset": {offset}}}}}'
    )
    assert f"is stored as result_ref {ref}; the part left out starts at offset {offset}; " in text
    assert f"read it page by page with use_capability {call}" in text
    shown_head = text.split("[...", 1)[0]
    # The call as written works, and gives the first line left out.
    page = await call_tool(runtime, "use_capability", json.loads(call))
    assert not page.is_error, text_of(page)
    assert text_of(page).startswith(f"[{ref}: bytes {offset}-{offset + 16384} of ")
    first_left_out = int(shown_head.splitlines()[-1]) + 1
    assert f"\n{first_left_out}\n{first_left_out + 1}\n" in text_of(page)


async def test_a_session_keeps_the_surface_it_listed(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    async with lsp_session(root, {"policy": {"mode": "bypass"}}) as client:
        await client.protocol.send_request_async(
            "toolhost/tools", {"surface": "minimal", "session": "m"}
        )
        read = await lsp_call(client, "read", {"path": str(root / "a.txt")}, session="m")
        # A name on one surface only is found from another session's default surface too.
        listed = await lsp_call(client, "ls", {}, session="m")
        other = await lsp_call(client, "read", {"path": str(root / "a.txt")}, session="o")
    assert not read["isError"], text_of(read)
    assert "alpha" in text_of(read)
    assert not listed["isError"] and "a.txt" in text_of(listed)
    assert not other["isError"] and "alpha" in text_of(other)
