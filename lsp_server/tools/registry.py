"""Every tool module, imported by name and listed in one literal tuple: no discovery by
import side effects, no module names as strings. Adding a tool: its module, one line here,
its test. `build_registry` is the one place a registry of the tools is made."""

from __future__ import annotations

import functools
from types import ModuleType

from lsp_server.core.contract import Face, Registry, Tool
from lsp_server.tools import web_fetch
from lsp_server.tools.code import code_index, delete_symbol, lsp_tools
from lsp_server.tools.files import (
    delete_range,
    edit_file,
    move_file,
    notebook_edit,
    read_file,
    read_window,
    view_image,
    write_file,
)
from lsp_server.tools.minimal import file_tools, grep_tool, shell_tool
from lsp_server.tools.search import glob_tool, grep, ls
from lsp_server.tools.session import planning, present, use_capability
from lsp_server.tools.shell import bash, job_input, job_tools

TOOL_MODULES: tuple[ModuleType, ...] = (
    read_file,
    read_window,
    write_file,
    edit_file,
    delete_range,
    move_file,
    view_image,
    notebook_edit,
    grep,
    glob_tool,
    ls,
    bash,
    job_tools,
    job_input,
    code_index,
    delete_symbol,
    lsp_tools,
    planning,
    present,
    use_capability,
    web_fetch,
    file_tools,
    grep_tool,
    shell_tool,
)


def all_tools(face: Face | None = None) -> list[Tool]:
    """The tools every face offers, and those of `face` (its entry's `face`)."""
    return [
        tool
        for module in TOOL_MODULES
        for tool in module.TOOLS
        if tool.contract.face is None or tool.contract.face == face
    ]


@functools.cache
def build_registry(face: Face | None = None) -> Registry:
    """The registry of `face`'s runtimes (None: what every face offers, the generated
    contract's); made once per process."""
    return Registry(all_tools(face))
