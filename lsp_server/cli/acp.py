"""`toolhost acp [--root DIR] [--no-mcp] [--isolate] -- <agent command...>`: started by an ACP
editor in place of the agent; serves the agent's files, terminals and permission requests through
toolhost's runtime (docs/ACP.md)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    acp = commands.add_parser(
        "acp",
        help="run an ACP agent behind toolhost: its files, terminals and permissions",
        description="The editor starts this in place of the agent: toolhost acp -- AGENT ARGS",
    )
    acp.add_argument(
        "--root",
        type=Path,
        help="workspace root for sessions whose cwd lies inside it (default: each cwd)",
    )
    acp.add_argument(
        "--no-mcp",
        dest="mcp",
        action="store_false",
        help="do not add toolhost's MCP server to the agent's sessions",
    )
    acp.add_argument(
        "--isolate",
        action="store_true",
        help="each new session works in its own git worktree made from the live tree (HEAD "
        "plus uncommitted changes); the agent brings its change back with use_capability "
        "id workspace:apply (docs/AGENTS.md)",
    )
    acp.add_argument("agent", nargs=argparse.REMAINDER, help="the agent's command line, after --")


def run(args: argparse.Namespace) -> int:
    from lsp_server.acp import main

    agent = list(args.agent)
    if agent[:1] == ["--"]:
        agent = agent[1:]
    return main.main(agent, args.root, args.mcp, isolate=args.isolate)
