"""The `toolhost` command: one small module per subcommand, each with `add_parser` and
`run(args) -> exit code`. Heavy imports wait inside `run`, so `toolhost serve` starts fast."""

from __future__ import annotations

import argparse
import os
import sys

from lsp_server import __version__
from lsp_server.cli import call, demo, doctor, index, schemas, serve, tools

COMMANDS = (serve, tools, call, schemas, index, doctor, demo)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolhost",
        description="The `toolhost` command: "
        + ", ".join(command.__name__.rsplit(".", 1)[1] for command in COMMANDS)
        + ".",
    )
    parser.add_argument("--version", action="version", version=f"toolhost {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    for command in COMMANDS:
        if args.command == command.__name__.rsplit(".", 1)[1]:
            try:
                code: int = command.run(args)
            except BrokenPipeError:
                # The reader went away (`toolhost tools --json | head`): not an error of ours.
                # Point stdout at /dev/null so the interpreter's final flush stays quiet.
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
                return 0
            return code
    return 2


if __name__ == "__main__":
    sys.exit(main())
