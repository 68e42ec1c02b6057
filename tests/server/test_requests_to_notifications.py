"""A request (a message with an id) sent to a method that is a notification gets an error
reply (issue 27): `$/cancelRequest`, `textDocument/didOpen` and their kind used to get no
answer at all, leaving the client waiting forever. Nothing is run for it, and the server
keeps serving."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.server.raw_wire import RawPeer

pytestmark = pytest.mark.timeout(120)


async def test_a_request_to_a_notification_gets_an_error_reply(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    document = {
        "uri": (root / "a.py").as_uri(),
        "languageId": "python",
        "version": 1,
        "text": "x = 2\n",
    }
    peer = await RawPeer.start(root, tmp_path / "state")
    try:
        for method, params in [
            ("$/cancelRequest", {"id": 12345}),
            ("$/setTrace", {"value": "off"}),
            ("initialized", {}),
            ("workspace/didChangeConfiguration", {"settings": {}}),
            ("textDocument/didOpen", {"textDocument": document}),
            ("textDocument/didClose", {"textDocument": {"uri": document["uri"]}}),
        ]:
            reply = await peer.request(method, params)
            assert reply["error"]["code"] == -32600, reply
            assert method in reply["error"]["message"], reply
            await peer.still_serving()
    finally:
        await peer.close()
