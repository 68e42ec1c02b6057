"""present: declare deliverable files so the editor can show them to the user."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import anyio

from lsp_server.core.contract import JSON_SCHEMA_DIALECT, ContractEntry, Hints, Tool
from lsp_server.core.errors import FS_NOT_A_FILE, FS_NOT_FOUND, INVALID_ARGUMENT, ToolError
from lsp_server.core.tool_output import ToolOutput
from lsp_server.core.uris import path_to_uri
from lsp_server.protocol import TOOLHOST_PRESENT, PresentedFileInfo, PresentParams
from lsp_server.runtime.context import ToolContext
from lsp_server.runtime.sessions.session_state import PresentedFile, PresentedFiles

MAX_FILES = 8

CONTRACT = ContractEntry(
    name="present",
    hints=Hints(changes_state=True, idempotent=True),  # replaces the list
    read_only=True,
    kind="state",
    description=(
        "Declare the files you produced for the user (1 to 8): the editor shows them as the "
        "result of the work. Each path must be an existing regular file inside the "
        "workspace (not a symlink or folder). A new call replaces the previous list."
    ),
    schema={
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "additionalProperties": False,
        "required": ["files"],
        "properties": {
            "files": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_FILES,
                "description": "The deliverables, most important first.",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["path"],
                    "properties": {
                        "path": {
                            "type": "string",
                            "minLength": 1,
                            "description": "Workspace-relative or absolute path of the file.",
                        },
                        "description": {
                            "type": "string",
                            "description": "One line saying what the file is.",
                        },
                    },
                },
            }
        },
    },
)


def _symlink_on_the_way(literal: Path, real: Path) -> bool:
    """True when the path as written goes through a symlink (its last part included)."""
    if literal.is_symlink():
        return True
    # abspath, not resolve(): the point is to compare the written path with the real one.
    return os.path.normcase(os.path.abspath(literal)) != os.path.normcase(str(real))  # noqa: PTH100


def _check_regular_file(shown: str, literal: Path, real: Path) -> None:
    if _symlink_on_the_way(literal, real):
        raise ToolError(
            FS_NOT_A_FILE,
            f"{shown} is (or goes through) a symbolic link",
            "present the real file's path inside the workspace",
        )
    try:
        mode = real.stat().st_mode
    except FileNotFoundError as exc:
        raise ToolError(FS_NOT_FOUND, f"{shown} does not exist", "present existing files") from exc
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
        raise ToolError(FS_NOT_A_FILE, f"{shown} is {kind}", "present regular files only")


def _checked(ctx: ToolContext, text: str) -> Path:
    """The file's real path after confinement and the regular-file/no-symlink checks."""
    real = ctx.workspace.resolve(text, access="read", base=ctx.session.cwd)
    literal = Path(text).expanduser()
    if not literal.is_absolute():
        literal = Path(ctx.session.cwd) / literal
    _check_regular_file(text, literal, real)
    return real


async def run(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    chosen: list[PresentedFile] = []
    reals: list[Path] = []
    for item in args["files"]:
        text: str = item["path"]
        real = await anyio.to_thread.run_sync(_checked, ctx, text)
        if real in reals:
            raise ToolError(INVALID_ARGUMENT, f"{text} is listed twice", "list each file once")
        reals.append(real)
        chosen.append(
            PresentedFile(ctx.workspace.relative(real), path_to_uri(real), item.get("description"))
        )
    ctx.session.extension(PresentedFiles).declare(chosen)
    infos = [PresentedFileInfo(f.path, f.uri, f.description) for f in chosen]
    ctx.client.notify(TOOLHOST_PRESENT, PresentParams(session=ctx.session.id, files=infos))
    lines = [f"presented {len(chosen)} file(s):"]
    lines += [f"- {f.path}" + (f" — {f.description}" if f.description else "") for f in chosen]
    return ToolOutput("\n".join(lines), paths=reals)


TOOLS = (Tool(CONTRACT, run),)
