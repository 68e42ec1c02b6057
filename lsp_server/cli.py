"""The `toolhost` command: serve, tools, call, schemas, index, doctor, demo."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from lsp_server import __version__, checkpoint_cli, index_cli
from lsp_server.config import Config
from lsp_server.policy.terminal import TerminalAsker, allow_everything
from lsp_server.policy.wiring import attach_policy, load_layers
from lsp_server.protocol import CallParams, message_converter
from lsp_server.runtime.contract import SURFACES, Surface
from lsp_server.runtime.dispatch import Runtime
from lsp_server.runtime.workspace import Workspace
from lsp_server.state import state_dir
from lsp_server.tools import build_registry
from lsp_server.wiring import Lifecycle, install_services


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toolhost", description=__doc__)
    parser.add_argument("--version", action="version", version=f"toolhost {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the language server (stdio by default)")
    serve.add_argument("--tcp", action="store_true", help="listen on 127.0.0.1 instead of stdio")
    serve.add_argument("--port", type=int, default=2087)
    serve.add_argument("--root", type=Path, help="workspace root (default: from the client)")

    tools = commands.add_parser("tools", help="list the tools of a surface")
    tools.add_argument("--surface", choices=SURFACES, default="core")
    tools.add_argument("--json", action="store_true", help="print the schemas as JSON")

    call = commands.add_parser("call", help="run one tool call through the same dispatch")
    call.add_argument("name")
    call.add_argument("arguments", nargs="?", default="{}", help="JSON object")
    call.add_argument("--root", type=Path, default=Path.cwd())
    call.add_argument("--session", default="cli")
    call.add_argument("--surface", choices=SURFACES, default="full")
    call.add_argument(
        "--yes",
        action="store_true",
        help="allow calls that would need approval (deny rules still apply)",
    )
    call.add_argument("--json", action="store_true", help="print the whole result as JSON")

    schemas = commands.add_parser("schemas", help="generate or check the generated contract")
    schemas.add_argument("action", choices=["generate", "check"])

    index_cli.add_parser(commands)
    checkpoint_cli.add_parsers(commands)
    doctor = commands.add_parser("doctor", help="which language server serves each language")
    doctor.add_argument("--root", type=Path, default=Path.cwd(), help="project to check")

    demo = commands.add_parser("demo", help="a scripted agent session over real LSP")
    demo.add_argument("--keep", action="store_true", help="keep the temporary workspace")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        from lsp_server import server

        root = args.root.resolve() if args.root else None
        if args.tcp:
            server.serve_tcp(args.port, root)
        else:
            server.serve_stdio(root)
        return 0
    if args.command == "tools":
        return _tools(args.surface, args.json)
    if args.command == "call":
        return asyncio.run(_call(args))
    if args.command == "schemas":
        return _schemas(args.action)
    if args.command in ("checkpoints", "revert"):
        return checkpoint_cli.run(args)
    if args.command == "index":
        return index_cli.run_index(args.root, args.exclude)
    if args.command == "doctor":
        from lsp_server.langservers import doctor

        report = doctor.diagnose(args.root.resolve(), Config().lsp.servers)
        print(doctor.render(report))
        return 0
    if args.command == "demo":
        from lsp_server import demo

        return demo.run_demo(keep=args.keep)
    return 2


def _tools(surface: Surface, as_json: bool) -> int:
    registry = build_registry()
    tools = registry.surface(surface)
    if as_json:
        print(json.dumps([t.contract.public() for t in tools], indent=2, ensure_ascii=False))
        return 0
    print(f"{surface} surface ({len(tools)} tools, hash {registry.hash(surface)[:16]})")
    for tool in tools:
        flag = "read-only" if tool.contract.read_only else "writes   "
        summary = tool.contract.description.split(". ")[0]
        print(f"  {tool.name:<16} {flag}  {summary}")
    return 0


async def _call(args: argparse.Namespace) -> int:
    try:
        arguments = json.loads(args.arguments)
    except json.JSONDecodeError as exc:
        print(f"toolhost: the arguments are not JSON ({exc})", file=sys.stderr)
        return 2
    roots = [args.root.resolve()]
    loaded = load_layers(None, roots)
    config = loaded.config
    runtime = Runtime(
        build_registry(),
        Workspace.from_config(roots, config.workspace),
        config,
        state_dir=state_dir(),
    )
    # Who answers "ask": --yes allows, a person at a terminal is asked, otherwise nobody
    # (the unattended decision). Deny rules and readOnly mode apply in every case.
    asker = None
    if args.yes:
        asker = allow_everything
    elif sys.stdin.isatty():
        asker = TerminalAsker(sys.stdin, sys.stderr)
    problems = loaded.problems + loaded.notices
    attach_policy(runtime, None, asker, problems)
    for problem in problems:
        print(f"toolhost: {problem}", file=sys.stderr)
    lifecycle = Lifecycle()
    install_services(runtime, lifecycle, long_lived=False)
    params = CallParams(
        name=args.name, arguments=arguments, session=args.session, surface=args.surface
    )
    try:
        result = await runtime.call(params)
    finally:
        await lifecycle.shutdown()
    if args.json:
        print(json.dumps(message_converter().unstructure(result), indent=2, ensure_ascii=False))
    else:
        for part in result.content:
            if part.get("type") == "text":
                print(part["text"])
            else:
                print(f"[{part.get('type')} {part.get('mimeType', '')}]")
    return 1 if result.is_error else 0


def _schemas(action: str) -> int:
    from lsp_server import schemagen

    registry = build_registry()
    root = schemagen.project_root()
    if action == "generate":
        changed = schemagen.write_all(registry, root)
        print("updated: " + ", ".join(changed) if changed else "generated files are up to date")
        return 0
    stale = schemagen.stale_files(registry, root)
    if stale:
        print(
            "out of date: " + ", ".join(stale) + " (run `toolhost schemas generate`)",
            file=sys.stderr,
        )
        return 1
    print("generated files are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
