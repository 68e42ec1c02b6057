"""`toolhost tools [--surface S] [--json]`: the tools of a surface, or their schemas."""

from __future__ import annotations

import argparse
import json
import re

from lsp_server.core.contract import SURFACES


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    tools = commands.add_parser("tools", help="list the tools of a surface")
    tools.add_argument("--surface", choices=SURFACES, default="core")
    tools.add_argument("--json", action="store_true", help="print the schemas as JSON")


def first_sentence(text: str) -> str:
    """Up to the first full stop that ends a sentence: not the one in "(e.g. ...)"."""
    match = re.search(r"(?<!\be\.g)(?<!\bi\.e)\.(\s+(?=[A-Z`])|$)", text)
    return text[: match.start()] if match else text


def run(args: argparse.Namespace) -> int:
    from lsp_server.tools.registry import build_registry

    registry = build_registry()
    tools = registry.surface(args.surface)
    if args.json:
        print(json.dumps([t.contract.public() for t in tools], indent=2, ensure_ascii=False))
        return 0
    print(f"{args.surface} surface ({len(tools)} tools, hash {registry.hash(args.surface)[:16]})")
    for tool in tools:
        flag = "read-only" if tool.contract.labelled_read_only else "writes   "
        summary = first_sentence(tool.contract.description)
        print(f"  {tool.name:<16} {flag}  {summary}")
    return 0
