"""One tool call over LSP, as an editor makes it.

Starts `toolhost serve` on stdio with pygls' client, opens examples/workspace as the
workspace folder, sends one `toolhost/call` (read_file README.md) and prints its text.

    .venv/bin/python examples/lsp_read_file.py
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

WORKSPACE = Path(__file__).resolve().parent / "workspace"


async def main() -> None:
    client = LanguageClient("lsp-read-file-example", "1.0")

    # What the server tells the editor beside the answer: its log, and the record of each
    # call (an editor's activity view shows them). Not needed here.
    @client.feature(types.WINDOW_LOG_MESSAGE)
    @client.feature("toolhost/didCall")
    def ignore(params: object) -> None:
        pass

    # `toolhost serve`, run by this interpreter.
    await client.start_io(sys.executable, "-m", "lsp_server", "serve")
    folder = types.WorkspaceFolder(uri=WORKSPACE.as_uri(), name=WORKSPACE.name)
    await client.initialize_async(
        types.InitializeParams(capabilities=types.ClientCapabilities(), workspace_folders=[folder])
    )
    client.initialized(types.InitializedParams())

    result = await client.protocol.send_request_async(
        "toolhost/call", {"name": "read_file", "arguments": {"path": "README.md"}}
    )
    print(result.content[0].text)

    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


if __name__ == "__main__":
    asyncio.run(main())
