"""bash of the minimal surface: `{command}` only, 60 s timeout, same runner and safety."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lsp_server.config.tree import Config
from lsp_server.core.contract import (
    JSON_SCHEMA_DIALECT,
    ContractEntry,
    Hints,
    ShellLaunch,
    Tool,
)
from lsp_server.core.tool_output import ToolOutput
from lsp_server.runtime.context import ToolContext
from lsp_server.tools.shell.bash import COMMAND_PROPERTY, check_command, execute

CONTRACT = ContractEntry(
    name="bash",
    hints=Hints(destructive=True, open_world=True),
    read_only=False,
    kind="shell",
    minimal=True,
    description=(
        "Run a shell command (bash -c) in the working folder, without a terminal or stdin; "
        "returns stdout and stderr combined, then the exit status. Stopped after 60 seconds."
    ),
    schema={
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "additionalProperties": False,
        "required": ["command"],
        "properties": {
            "command": COMMAND_PROPERTY,
        },
    },
)


def launch(config: Config, args: Mapping[str, Any]) -> ShellLaunch:
    shell = config.shell
    return ShellLaunch(False, min(shell.minimal_timeout_ms, shell.max_timeout_ms))


async def run(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    check_command(args["command"])
    timeout_ms = launch(ctx.config, args).timeout_ms
    assert timeout_ms is not None
    return await execute(ctx, args["command"], timeout_ms, interactive=False)


TOOLS = (Tool(CONTRACT, run, shell_launch=launch),)
