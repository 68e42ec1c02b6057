"""The `toolhost` command: one small module per subcommand, each with `add_parser` and
`run(args) -> exit code`. Heavy imports wait inside `run`, so `toolhost serve` starts fast;
a named command imports only its own module (`toolhost mcp` already pays for the MCP SDK)."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from types import ModuleType

from lsp_server import __version__

COMMANDS = (
    "serve",
    "mcp",
    "acp",
    "tools",
    "call",
    "checkpoints",
    "revert",
    "schemas",
    "index",
    "doctor",
    "status",
    "trust",
    "demo",
)


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"lsp_server.cli.{name}")


def _parser(names: tuple[str, ...]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolhost",
        description="The `toolhost` command: " + ", ".join(COMMANDS) + ".",
    )
    parser.add_argument("--version", action="version", version=f"toolhost {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in names:
        _module(name).add_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else argv
    if "--warm" in given:
        from lsp_server.warm import handover

        if handover.requested(given):
            status = handover.hand_over(given)
            if status is not None:
                return status
    return run_here(given)


def run_here(given: list[str]) -> int:
    """The command, in this process (a warm start's child comes here directly)."""
    names = (given[0],) if given and given[0] in COMMANDS else COMMANDS
    args = _parser(names).parse_args(given)
    try:
        code: int = _module(args.command).run(args)
    except BrokenPipeError:
        # The reader went away (`toolhost tools --json | head`): not an error of ours.
        # Point stdout at /dev/null so the interpreter's final flush stays quiet.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:
        from lsp_server.core.errors import BROAD_ROOT, ToolError

        if isinstance(exc, ToolError) and exc.code == BROAD_ROOT:  # compose.py's backstop
            print(f"toolhost: {exc.message}", file=sys.stderr)
            return 2
        raise
    return code


if __name__ == "__main__":
    sys.exit(main())
