"""Every tool module, imported by name and listed in one literal tuple: no discovery by
import side effects, no module names as strings."""

from __future__ import annotations

from types import ModuleType

from lsp_server.core.contract import Registry, Tool
from lsp_server.tools import web_fetch
from lsp_server.tools.code import code_index, delete_symbol, lsp_tools
from lsp_server.tools.files import (
    delete_range,
    edit_file,
    move_file,
    notebook_edit,
    read_file,
    view_image,
    write_file,
)
from lsp_server.tools.minimal import file_tools, grep_tool, shell_tool
from lsp_server.tools.search import glob_tool, grep, ls
from lsp_server.tools.session import planning, present, use_capability
from lsp_server.tools.shell import bash, job_tools

TOOL_MODULES: tuple[ModuleType, ...] = (
    read_file,
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


def all_tools() -> list[Tool]:
    return [tool for module in TOOL_MODULES for tool in module.TOOLS]


def build_registry() -> Registry:
    return Registry(all_tools())
