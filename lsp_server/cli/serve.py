"""`toolhost serve`: the language server, on stdio (default) or TCP on loopback."""

from __future__ import annotations

import argparse
from pathlib import Path

from lsp_server.warm.flag_help import WARM_HELP


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = commands.add_parser("serve", help="run the language server (stdio by default)")
    serve.add_argument(
        "--tcp",
        action="store_true",
        help="listen on 127.0.0.1 instead of stdio (one editor connection, token required)",
    )
    serve.add_argument("--port", type=int, default=2087)
    serve.add_argument("--root", type=Path, help="workspace root (default: from the client)")
    serve.add_argument("--warm", action="store_true", help=WARM_HELP)


def run(args: argparse.Namespace) -> int:
    root = args.root.resolve() if args.root else None
    if args.tcp:
        from lsp_server.server import tcp

        tcp.serve_tcp(args.port, root)
    else:
        from lsp_server.server import transport

        transport.serve_stdio(root)
    return 0
