"""`toolhost doctor [--root DIR]`: which language server serves each language."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    doctor = commands.add_parser("doctor", help="which language server serves each language")
    doctor.add_argument("--root", type=Path, default=Path.cwd(), help="project to check")


def run(args: argparse.Namespace) -> int:
    from lsp_server.config.tree import Config
    from lsp_server.langservers import doctor

    report = doctor.diagnose(args.root.resolve(), Config().lsp.servers)
    print(doctor.render(report))
    return 0
