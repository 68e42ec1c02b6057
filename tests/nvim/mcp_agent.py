"""An MCP agent beside Neovim: the SDK client runs read_file then edit_file through
`toolhost mcp`, which attaches to the editor's toolhost. Prints its observations as JSON."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from tests.mcp.clients import mcp_session, text_of


async def main(root: Path) -> dict[str, object]:
    async with mcp_session(root, "--attach", "require", name="agent-beside-nvim") as session:
        read = await session.call_tool("read_file", {"path": "notes.md"})
        edit = await session.call_tool(
            "edit_file",
            {
                "path": "notes.md",
                "old_string": "line four",
                "new_string": "line four, by the MCP agent",
            },
        )
    return {
        "read_text": text_of(read),
        "read_runtime": read.meta["toolhost"]["runtime"],
        "edit_error": edit.is_error,
        "edit_text": text_of(edit),
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(Path(sys.argv[1])))))
