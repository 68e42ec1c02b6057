"""The one method table and capability type in lsp_server/protocol/, as Python, the
generated TypeScript (VS Code), the generated Lua (Neovim) and the generated Emacs Lisp
spell them, and what each client declares."""

from __future__ import annotations

import re
from pathlib import Path

import attrs

from lsp_server import protocol

ROOT = Path(__file__).resolve().parents[2]
TS_GENERATED = ROOT / "extension" / "vscode" / "src" / "common" / "protocol.generated.ts"
TS_CONTROLLER = ROOT / "extension" / "vscode" / "src" / "serverController.ts"
LUA_GENERATED = ROOT / "extension" / "nvim" / "lua" / "toolhost" / "protocol_generated.lua"
LUA_PROTOCOL = ROOT / "extension" / "nvim" / "lua" / "toolhost" / "protocol.lua"
ELISP_GENERATED = ROOT / "extension" / "emacs" / "toolhost-protocol.el"
ELISP_CLIENT = ROOT / "extension" / "emacs" / "toolhost.el"


def python_constants() -> dict[str, str]:
    return {spec.constant: spec.method for spec in protocol.METHODS}


def capability_keys() -> set[str]:
    return {protocol.camel(f.name) for f in attrs.fields(protocol.ToolhostClientCapabilities)}


def lua_block(text: str, name: str) -> str:
    match = re.search(rf"\b{name} = \{{(.*?)\n\s*\}}", text, re.S)
    assert match, f"{name} not found"
    return match.group(1)


def test_python_constants_are_the_method_table() -> None:
    constants = python_constants()
    assert len(constants) == len(protocol.METHODS)
    assert all(getattr(protocol, name) == method for name, method in constants.items())


def test_typescript_has_the_same_constants_and_capability_type() -> None:
    text = TS_GENERATED.read_text(encoding="utf-8")
    constants = dict(re.findall(r'export const (TOOLHOST_\w+) = "(toolhost/\w+)";', text))
    assert constants == python_constants()
    interface = re.search(r"export interface ToolhostClientCapabilities \{(.*?)\}", text, re.S)
    assert interface is not None
    assert set(re.findall(r"(\w+)\?:", interface.group(1))) == capability_keys()


def test_lua_has_the_same_methods_and_capability_keys() -> None:
    text = LUA_GENERATED.read_text(encoding="utf-8")
    methods = dict(re.findall(r'(\w+) = "(toolhost/\w+)"', lua_block(text, "methods")))
    expected = {c.removeprefix("TOOLHOST_").lower(): m for c, m in python_constants().items()}
    assert methods == expected
    assert set(re.findall(r'"(\w+)"', lua_block(text, "capabilities"))) == capability_keys()


def test_elisp_has_the_same_methods_and_capability_keys() -> None:
    text = ELISP_GENERATED.read_text(encoding="utf-8")
    methods = dict(re.findall(r"\(([\w-]+) \. (toolhost/\w+)\)", text))
    expected = {
        c.removeprefix("TOOLHOST_").lower().replace("_", "-"): m
        for c, m in python_constants().items()
    }
    assert methods == expected
    keys = re.search(r"\(defconst toolhost-protocol-capabilities '\((.*?)\)", text)
    assert keys is not None
    assert set(re.findall(r":(\w+)", keys.group(1))) == capability_keys()


def test_clients_declare_exactly_the_capability_keys() -> None:
    lua = lua_block(LUA_PROTOCOL.read_text(encoding="utf-8"), "M.client_capabilities")
    assert set(re.findall(r"(\w+) = (?:true|false)", lua)) == capability_keys()
    declared = re.search(r"experimental\.toolhost = \{(.*?)\}", TS_CONTROLLER.read_text())
    assert declared is not None
    assert set(re.findall(r"(\w+): (?:true|false)", declared.group(1))) == capability_keys()
    emacs = re.search(
        r"\(defun toolhost--capabilities \(\)\n(.*?)\n\n", ELISP_CLIENT.read_text(), re.S
    )
    assert emacs is not None
    # Each key is followed by its value: t, :json-false or a form.
    keys = re.findall(r":(\w+)\s+(?:t\b|:json-false|\()", emacs.group(1))
    assert sorted(keys) == sorted(capability_keys())
