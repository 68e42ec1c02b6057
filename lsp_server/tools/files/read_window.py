"""The runtime's reader for ACP's fs/read_text_file: the file's exact text (line endings
kept, no line numbers), optionally from a 1-based `line` for `limit` lines. Its entry's
`face="acp"` keeps it in the runtimes `toolhost acp` opens only (and out of the generated
contract); the same confinement, secret refusal and observation as read_file."""

from __future__ import annotations

from typing import Any

from lsp_server.core.contract import ContractEntry, PathArg, Tool
from lsp_server.core.tool_output import ToolOutput
from lsp_server.runtime.context import ToolContext
from lsp_server.tools._support.schema_parts import integer, object_schema, string
from lsp_server.tools.files.read_file import read_observed

NAME = "acp_read_text_file"

CONTRACT = ContractEntry(
    name=NAME,
    read_only=True,
    kind="read",
    minimal=True,
    description=(
        "ACP fs/read_text_file: the exact text of a file (absolute path), optionally from the "
        "1-based `line` for `limit` lines. Records the observation a later write needs."
    ),
    schema=object_schema(
        {
            "path": string("Absolute path of the file."),
            "line": integer("1-based line to start from.", minimum=1),
            "limit": integer("Maximum number of lines.", minimum=1),
        },
        ["path"],
    ),
    path_args=(PathArg("path", access="read", absolute=True),),
    face="acp",
)


def window(text: str, line: int | None, limit: int | None) -> str:
    """Lines `line`.. (1-based) of `text`, at most `limit`, each with its own ending."""
    if line is None and limit is None:
        return text
    # Lines end at "\n" only (a "\r" stays with its line), as agents count them.
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    start = (line or 1) - 1
    end = len(lines) if limit is None else start + limit
    return "".join(lines[start:end])


async def run(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    text_file = await read_observed(ctx)
    return ToolOutput(window(text_file.text, args.get("line"), args.get("limit")))


TOOLS = (Tool(CONTRACT, run),)
