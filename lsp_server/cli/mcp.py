"""`toolhost mcp`: serve the tools over the Model Context Protocol (stdio) for agent chats,
attached to the editor's toolhost when one serves the workspace (docs/MCP.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from lsp_server.warm.flag_help import WARM_HELP

# core.contract's SURFACES, written out: importing it costs attrs before the front
# answers (tests/mcp/test_front.py checks both are the same).
SURFACES = ("core", "full", "minimal")


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = commands.add_parser("mcp", help="serve the tools over MCP (stdio) for agent chats")
    mcp.add_argument(
        "--root",
        type=Path,
        help="workspace root (default: the working folder, walked up to the nearest .git "
        "or .toolhost.toml)",
    )
    mcp.add_argument("--surface", choices=SURFACES, default="full")
    mcp.add_argument("--session", default="", help="session name (default: one per client)")
    mcp.add_argument(
        "--attach",
        choices=["auto", "never", "require"],
        default="auto",
        help="run calls in the editor's toolhost when one serves the root (default: auto)",
    )
    mcp.add_argument(
        "--http",
        metavar="127.0.0.1:PORT",
        help="serve Streamable HTTP on this loopback address (port 0: any free port) instead "
        "of stdio; clients send the bearer token from the 0600 file named at start",
    )
    mcp.add_argument(
        "--approvals",
        choices=["auto", "client"],
        default=None,
        help="who approves calls: auto (the attached editor, else the MCP client's form) or "
        "client (the MCP client's own permission step); default: mcp.approvals in config.toml",
    )
    mcp.add_argument(
        "--isolate",
        action="store_true",
        help="work in a git worktree made from the root's live tree (HEAD plus uncommitted "
        "changes) in toolhost's state folder; the agent brings its change back with "
        "use_capability id workspace:apply (own runtime only: not with --attach require)",
    )
    mcp.add_argument("--warm", action="store_true", help=WARM_HELP)


def run(args: argparse.Namespace) -> int:
    # The standard library only: the MCP SDK loads in the front's thread (mcp/stdio/front.py).
    from lsp_server.mcp.stdio import front

    return front.main(
        args.root,
        args.surface,
        args.session,
        args.attach,
        args.http,
        args.approvals,
        isolate=args.isolate,
    )
