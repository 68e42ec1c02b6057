"""toolhost/revert of a call that has no checkpoint: a clean JSON-RPC error naming the
code, never an internal error (over a real `toolhost serve`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from tests.helpers import lsp_session

pytestmark = pytest.mark.slow


async def test_revert_of_an_unknown_call_is_checkpoint_unknown(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    async with lsp_session(root) as client:
        with pytest.raises(JsonRpcException) as refused:
            await client.protocol.send_request_async("toolhost/revert", {"callId": "c-nope"})
        listed = await client.protocol.send_request_async("toolhost/checkpoints", {})
    error = refused.value.to_response_error()
    assert error.code == -32602
    assert error.data["code"] == "checkpoint.unknown"
    assert "c-nope" in error.message
    assert listed["checkpoints"] == []
