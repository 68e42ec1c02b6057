"""A healthy `toolhost serve` writes nothing to stderr: clients log every stderr line as an
error (VS Code's language client as [error], Neovim's lsp.log as ERROR). Its everyday
lines reach the client as window/logMessage at their own level."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.server.raw_wire import RawPeer


async def test_start_calls_shutdown_and_exit_write_nothing_to_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / "a.txt").write_text("a\n")
    monkeypatch.delenv("TOOLHOST_LOG", raising=False)
    for _ in range(3):  # the exit's race (stdin closed just after `exit`) did not always show
        peer = await RawPeer.start(root, tmp_path / "state")
        read = await peer.request(
            "toolhost/call", {"name": "read_file", "arguments": {"path": "a.txt"}}
        )
        assert read["result"]["isError"] is False, read
        await peer.request("shutdown", None)
        await peer.send({"jsonrpc": "2.0", "method": "exit", "params": None})
        assert await peer.close() == 0
        assert peer.stderr.decode() == ""
        info = [m["params"] for m in peer.messages if m.get("method") == "window/logMessage"]
        assert any(p["message"].startswith("INFO ") for p in info), info
        assert all(p["type"] == 3 for p in info if p["message"].startswith("INFO ")), info
