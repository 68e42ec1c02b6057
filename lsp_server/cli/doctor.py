"""`toolhost doctor [--root DIR]`: which toolhost runs, whether it is the one on PATH, what
it carries (ripgrep, the tree-sitter grammars), the configuration (the managed file,
whether the workspace .toolhost.toml is approved, which layer set each policy value), which
language server serves each language, who answers lsp_* questions (the editor's servers or
toolhost's), whether shell commands can run in the sandbox here (and in which mode), and
whether a warm process serves `--warm` starts. Whatever is missing comes with how to get
it."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    doctor = commands.add_parser(
        "doctor", help="which language server serves each language; the shell sandbox"
    )
    doctor.add_argument("--root", type=Path, default=Path.cwd(), help="project to check")


def sandbox_section(root: Path) -> str:
    from lsp_server.config.layers import WORKSPACE_CONFIG_NAME, load_layers
    from lsp_server.home.dirs import Dirs
    from lsp_server.sandbox.doctor import render_sandbox, where_mode_is_set
    from lsp_server.sandbox.hidden import HiddenCredentials
    from lsp_server.sandbox.platforms import find_backend

    dirs = Dirs.from_environment()
    loaded = load_layers(None, [root], dirs)
    shell = loaded.config.shell
    files = [dirs.user_config_file]
    approved = any(found.trusted for found in loaded.workspace_files)
    if approved or shell.sandbox != "off":
        files.append(root / WORKSPACE_CONFIG_NAME)
    found = find_backend(None)
    return render_sandbox(
        shell.sandbox,
        found,
        shell.sandbox_network,
        where_mode_is_set(files),
        shell.sandbox_network_allow,
        [str(h.path) for h in HiddenCredentials().find([root.resolve()], shell.sandbox_hide)],
    )


def answers_section(root: Path, languages: list[str], provider: str) -> str:
    """Asks the editor's toolhost for this folder, if one runs, who has answered so far."""
    import asyncio

    from lsp_server.attach.attach_client import editor_status
    from lsp_server.home.dirs import Dirs
    from lsp_server.langservers.answer_log import render_answers

    try:
        found = asyncio.run(editor_status(Dirs.from_environment().attach_folder, root))
    except OSError:
        found = None  # no usable discovery folder: as if no editor ran
    if found is None:
        return render_answers(languages, provider, None, None)
    record, status = found
    editor = f"{status.get('editor') or 'the editor'} (toolhost pid {record.pid})"
    answers = status.get("lspAnswers")
    # The running editor's settings decide, not the config files alone.
    if isinstance(answers, dict) and isinstance(answers.get("provider"), str):
        provider = answers["provider"]
    return render_answers(languages, provider, editor, answers)


def run(args: argparse.Namespace) -> int:
    from lsp_server.cli.install_report import render_command, render_install
    from lsp_server.config.layers import load_layers
    from lsp_server.config.overview import render_config
    from lsp_server.home.dirs import Dirs
    from lsp_server.langservers import diagnosis
    from lsp_server.warm.status_line import warm_section

    root = args.root.resolve()
    print(render_install())
    print(render_command())
    print()
    loaded = load_layers(None, [root], Dirs.from_environment())
    print(render_config(loaded))  # an unapproved .toolhost.toml, the managed file, sources
    print()
    lsp = loaded.config.lsp
    report = diagnosis.diagnose(root, lsp.servers, project_local=lsp.project_servers)
    print(diagnosis.render(report))
    print()
    print(answers_section(root, [row.language for row in report], lsp.provider))
    print()
    print(sandbox_section(root))
    print()
    print(warm_section())
    return 0
