"""An MCP agent beside an editor: the SDK client runs `git clone URL` with bash through
`toolhost mcp --attach require` (the editor's runtime, so the editor asks for the
password). Prints the result as JSON: its error flag, text and error code."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from tests.mcp.clients import mcp_session, text_of


async def main(root: Path, url: str) -> dict[str, Any]:
    async with mcp_session(root, "--attach", "require", name="agent-beside-the-editor") as session:
        result = await session.call_tool("bash", {"command": f"git clone {url}"})
    return {
        "isError": result.is_error,
        "text": text_of(result),
        "structured": result.structured_content,
        "runtime": (result.meta or {}).get("toolhost", {}).get("runtime"),
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(Path(sys.argv[1]), sys.argv[2])), default=str))
