"""The Lua plugin handles every server->client method of the server's one table (the names
themselves are compared in tests/protocol/test_protocol_tables.py)."""

from __future__ import annotations

import re

from lsp_server import protocol
from tests.nvim.conftest import PLUGIN_DIR

PROTOCOL_LUA = PLUGIN_DIR / "lua" / "toolhost" / "protocol_generated.lua"


def _lua_table(name: str) -> str:
    text = PROTOCOL_LUA.read_text(encoding="utf-8")
    match = re.search(rf"\b{name} = \{{(.*?)\n\s*\}}", text, re.S)
    assert match, f"{name} not found in {PROTOCOL_LUA}"
    return match.group(1)


def test_lua_method_names_are_the_server_methods() -> None:
    lua_methods = set(re.findall(r'"(toolhost/[A-Za-z]+)"', _lua_table("methods")))
    assert lua_methods == {spec.method for spec in protocol.METHODS}


def test_lua_handlers_cover_every_server_to_client_method() -> None:
    server_to_client = {
        spec.method for spec in protocol.METHODS if spec.direction == "server->client"
    }
    init = (PLUGIN_DIR / "lua" / "toolhost" / "init.lua").read_text(encoding="utf-8")
    keys = dict(re.findall(r'(\w+) = "(toolhost/[A-Za-z]+)"', _lua_table("methods")))
    handled = {keys[k] for k in re.findall(r"\[methods\.(\w+)\] =", init)}
    assert server_to_client <= handled
