"""Every tool module, listed explicitly: no discovery by import side effects."""

from __future__ import annotations

from lsp_server.runtime.contract import Registry, Tool

TOOL_MODULES: tuple[str, ...] = (
    "read_file",
    "write_file",
    "edit_file",
    "delete_range",
    "move_file",
    "minimal_files",
)


def all_tools() -> list[Tool]:
    import importlib

    tools: list[Tool] = []
    for module_name in TOOL_MODULES:
        module = importlib.import_module(f"lsp_server.tools.{module_name}")
        tools.extend(module.TOOLS)
    return tools


def build_registry() -> Registry:
    return Registry(all_tools())
