"""`toolhost trust [PATH] [--sha256 HEX]`: approve a workspace `.toolhost.toml` by its exact
content (docs/POLICY.md, "Trusting a workspace config").

It shows the file (control characters made visible, so that nothing hides a line) and what
approving it would let apply, then asks on the terminal; `--sha256` approves without asking
when the file still hashes to the given value (the sha256 that `toolhost status`, `doctor` or
the editor showed). The approval is recorded in the user's state folder; a running toolhost
applies it at its next start (the editor's own "Trust" applies it at once)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from lsp_server.config.workspace_file import WORKSPACE_CONFIG_NAME

_ANSWERS = {"y": True, "yes": True, "n": False, "no": False, "": False}


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    trust = commands.add_parser(
        "trust",
        help="approve a workspace .toolhost.toml by its exact content",
        description="Show a workspace .toolhost.toml and approve this exact content: only "
        "then do its entries that loosen policy apply (any later change needs a new approval).",
    )
    trust.add_argument(
        "path",
        nargs="?",
        type=Path,
        default=None,
        help=f"the {WORKSPACE_CONFIG_NAME} or its folder (default: the working folder's, "
        f"walked up to the nearest .git or {WORKSPACE_CONFIG_NAME})",
    )
    trust.add_argument(
        "--sha256",
        metavar="HEX",
        help="approve without asking, only if the file's sha256 is still HEX",
    )


def visible(text: str) -> str:
    """The text with every control character but newline and tab shown as an escape: a
    terminal sequence in the file must not hide or rewrite what the user reads."""
    return "".join(
        ch if ch in "\n\t" or (ch.isprintable() and ch != "\x7f") else repr(ch)[1:-1] for ch in text
    )


def _config_path(given: Path | None) -> Path:
    if given is None:  # as `toolhost mcp` finds its root (mcp/stdio/front.py)
        start = Path.cwd()
        for folder in (start, *start.parents):
            if (folder / ".git").exists() or (folder / WORKSPACE_CONFIG_NAME).exists():
                return folder / WORKSPACE_CONFIG_NAME
        return start / WORKSPACE_CONFIG_NAME
    given = given.expanduser().absolute()
    return given / WORKSPACE_CONFIG_NAME if given.is_dir() else given


def _ask(question: str, stdin: TextIO, stdout: TextIO) -> bool:
    while True:
        stdout.write(question)
        stdout.flush()
        line = stdin.readline()
        if not line:  # end of input: no
            stdout.write("\n")
            return False
        answer = _ANSWERS.get(line.strip().lower())
        if answer is not None:
            return answer
        stdout.write("Please answer y (trust this content) or n (do not).\n")


def run(args: argparse.Namespace) -> int:
    from lsp_server.config.approval import approve_config
    from lsp_server.config.trust import TrustStore, content_sha256
    from lsp_server.config.workspace_file import read_regular_file, read_workspace_file
    from lsp_server.home.dirs import Dirs

    path = _config_path(args.path)
    root = path.parent
    trust = TrustStore(Dirs.from_environment().state)
    try:
        raw = read_regular_file(path)
    except OSError as exc:
        print(f"toolhost trust: cannot read {path}: {exc}", file=sys.stderr)
        return 2
    if raw is None:
        print(f"toolhost trust: {path} does not exist", file=sys.stderr)
        return 2
    sha = content_sha256(raw)
    found = read_workspace_file(root, trust, [], [])
    print(f"{path}\nsha256 {sha}")
    if found is not None:
        print(f"state: {'trusted' if found.trusted else 'not trusted'} ({found.reason})")
    print("-" * 72)
    print(visible(raw.decode("utf-8", errors="replace")), end="" if raw.endswith(b"\n") else "\n")
    print("-" * 72)
    if found is not None and found.trusted:
        print("Already approved: nothing to do.")
        return 0
    if found is not None and found.ignored:
        print("Approving it lets these apply: " + ", ".join(found.ignored))
    wanted = args.sha256
    if wanted is None:
        if not sys.stdin.isatty():
            print(
                "toolhost trust: no terminal to ask on; to approve the content shown above, "
                f"run: toolhost trust {path} --sha256 {sha}",
                file=sys.stderr,
            )
            return 2
        if not _ask("Trust this exact content? [y/N] ", sys.stdin, sys.stdout):
            print("Not trusted: its loosening entries stay ignored.")
            return 1
        wanted = sha
    approval = approve_config(path, wanted, [root], trust)
    if not approval.trusted:
        print(f"toolhost trust: {approval.message}", file=sys.stderr)
        return 1
    print(
        f"{approval.message}. A running toolhost applies it at its next start "
        "(restart the editor's server or start a new agent session)."
    )
    return 0
