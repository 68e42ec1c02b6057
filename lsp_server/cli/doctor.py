"""`toolhost doctor [--root DIR]`: which language server serves each language."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    doctor = commands.add_parser("doctor", help="which language server serves each language")
    doctor.add_argument("--root", type=Path, default=Path.cwd(), help="project to check")


def run(args: argparse.Namespace) -> int:
    from lsp_server.config.layers import load_layers
    from lsp_server.dirs import Dirs
    from lsp_server.langservers import doctor

    root = args.root.resolve()
    lsp = load_layers(None, [root], Dirs.from_environment()).config.lsp
    report = doctor.diagnose(root, lsp.servers, project_local=lsp.project_servers)
    print(doctor.render(report))
    return 0
