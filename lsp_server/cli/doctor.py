"""`toolhost doctor [--root DIR]`: which language server serves each language, and whether
shell commands can run in the sandbox here (and in which mode)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    doctor = commands.add_parser(
        "doctor", help="which language server serves each language; the shell sandbox"
    )
    doctor.add_argument("--root", type=Path, default=Path.cwd(), help="project to check")


def sandbox_section(root: Path) -> str:
    from lsp_server.config.layers import load_layers
    from lsp_server.dirs import Dirs
    from lsp_server.policy.persist import WORKSPACE_CONFIG_NAME
    from lsp_server.sandbox.doctor import render_sandbox, where_mode_is_set
    from lsp_server.sandbox.platforms import find_backend

    dirs = Dirs.from_environment()
    loaded = load_layers(None, [root], dirs)
    shell = loaded.config.shell
    files = [dirs.user_config_file]
    if loaded.workspace_trusted or shell.sandbox != "off":
        files.append(root / WORKSPACE_CONFIG_NAME)
    found = find_backend(None)
    return render_sandbox(shell.sandbox, found, shell.sandbox_network, where_mode_is_set(files))


def run(args: argparse.Namespace) -> int:
    from lsp_server.config.tree import Config
    from lsp_server.langservers import doctor

    root = args.root.resolve()
    report = doctor.diagnose(root, Config().lsp.servers)
    print(doctor.render(report))
    print()
    print(sandbox_section(root))
    return 0
