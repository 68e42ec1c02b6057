"""`toolhost tools [NAME] [--surface S] [--json]`: the tools of a surface, one line each with
its arguments, or one tool's arguments in full (types, defaults, what is required), all
read from the canonical schema the agents get."""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
from typing import Any

from lsp_server.core.contract import SURFACES, Tool

# "(default 120000, at most ...)", "(default: the workspace root)", "; default 200"
_DEFAULT = re.compile(r"\bdefault:? ([^(),;]+)")


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    tools = commands.add_parser(
        "tools",
        help="list the tools of a surface, or one tool's arguments",
        description="Without NAME: the tools of a surface, one line each with its arguments "
        "(* marks a required one). With NAME: that tool's description and every argument "
        "with its type, default and whether it is required.",
    )
    tools.add_argument("name", nargs="?", help="a tool whose arguments to show (e.g. read_file)")
    tools.add_argument(
        "--surface",
        choices=SURFACES,
        default="core",
        help="the tool set to list: core (the default, what an agent starts with), full "
        "(every tool) or minimal",
    )
    tools.add_argument("--json", action="store_true", help="print the schemas as JSON")


def first_sentence(text: str) -> str:
    """Up to the first full stop that ends a sentence: not the one in "(e.g. ...)"."""
    match = re.search(r"(?<!\be\.g)(?<!\bi\.e)\.(\s+(?=[A-Z`])|$)", text)
    return text[: match.start()] if match else text


def run(args: argparse.Namespace) -> int:
    from lsp_server.tools.registry import build_registry

    registry = build_registry()
    if args.name is not None:
        tool = registry.get(args.name, args.surface) or next(
            (t for t in registry.all_tools() if t.name == args.name), None
        )
        if tool is None:
            names = ", ".join(sorted({t.name for t in registry.all_tools()}))
            print(f"toolhost: there is no tool {args.name!r}; the tools: {names}", file=sys.stderr)
            return 2
        if args.json:
            print(json.dumps(tool.contract.public(), indent=2, ensure_ascii=False))
        else:
            print(describe_tool(tool, _surfaces(registry, tool)))
        return 0
    tools = registry.surface(args.surface)
    if args.json:
        print(json.dumps([t.contract.public() for t in tools], indent=2, ensure_ascii=False))
        return 0
    print(f"{args.surface} surface ({len(tools)} tools, hash {registry.hash(args.surface)[:16]})")
    for tool in tools:
        flag = "read-only" if tool.contract.labelled_read_only else "writes   "
        summary = first_sentence(tool.contract.description)
        print(f"  {tool.name:<16} {flag}  ({argument_names(tool)})  {summary}")
    print("(* required)  a tool's arguments in full: toolhost tools NAME")
    return 0


def _surfaces(registry: Any, tool: Tool) -> list[str]:
    if tool.contract.minimal:
        return ["minimal"]
    return ["core", "full"] if tool.name in registry.core_names else ["full"]


def _schema(tool: Tool) -> dict[str, Any]:
    schema: dict[str, Any] = tool.contract.public().get("inputSchema") or {}
    return schema


def argument_names(tool: Tool) -> str:
    """`path*, offset, limit`: required ones first, marked."""
    schema = _schema(tool)
    required = schema.get("required", [])
    others = [name for name in schema.get("properties", {}) if name not in required]
    return ", ".join([*(f"{name}*" for name in required), *others])


def type_of(spec: dict[str, Any]) -> str:
    """A JSON schema's type in words: `integer >= 1, <= 600000`, `one of "a", "b"` ..."""
    if "enum" in spec:
        return "one of " + ", ".join(json.dumps(v) for v in spec["enum"])
    kind = spec.get("type", "any")
    if isinstance(kind, list):
        kind = " or ".join(str(k) for k in kind)
    words = [str(kind)]
    for key, sign in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<=")):
        if key in spec:
            words.append(f"{sign} {spec[key]}")
    if kind == "array":
        items = spec.get("items", {})
        inner = items.get("properties")
        if inner:
            fields = [f"{n}*" if n in items.get("required", []) else n for n in inner]
            words = [f"array of objects {{{', '.join(fields)}}}"]
        else:
            words = [f"array of {type_of(items)}"]
        if "minItems" in spec:
            words.append(f"at least {spec['minItems']}")
        if "maxItems" in spec:
            words.append(f"at most {spec['maxItems']}")
    return ", ".join(words)


def default_of(spec: dict[str, Any]) -> str | None:
    if "default" in spec:
        return json.dumps(spec["default"])
    found = _DEFAULT.search(spec.get("description", ""))
    return found.group(1).strip() if found else None


def _wrapped(text: str, indent: str) -> list[str]:
    return textwrap.wrap(text, 96, initial_indent=indent, subsequent_indent=indent) or [indent]


def describe_tool(tool: Tool, surfaces: list[str]) -> str:
    flag = "read-only" if tool.contract.labelled_read_only else "writes"
    lines = [f"{tool.name}  ({flag}; surfaces: {', '.join(surfaces)})", ""]
    lines += _wrapped(tool.contract.description, "  ")
    schema = _schema(tool)
    required = schema.get("required", [])
    properties: dict[str, Any] = schema.get("properties", {})
    lines += ["", "Arguments (* required):" if properties else "Arguments: none"]
    order = [*required, *(n for n in properties if n not in required)]
    for name in order:
        spec = properties.get(name, {})
        shown = f"{name}*" if name in required else name
        about = type_of(spec)
        default = default_of(spec)
        if default is not None:
            about += f"; default {default}"
        lines.append(f"  {shown:<22} {about}")
        lines += _wrapped(spec.get("description", ""), " " * 25)
        items = spec.get("items", {}) if spec.get("type") == "array" else {}
        inner_required = items.get("required", [])
        for inner, inner_spec in items.get("properties", {}).items():
            mark = f"{inner}*" if inner in inner_required else inner
            lines.append(f"    .{mark:<19} {type_of(inner_spec)}")
            lines += _wrapped(inner_spec.get("description", ""), " " * 25)
    example = {name: _example(name, properties.get(name, {})) for name in required}
    lines += ["", f"Call it: toolhost call {tool.name} '{json.dumps(example)}'"]
    return "\n".join(lines)


def _example(name: str, spec: dict[str, Any]) -> Any:
    """A placeholder of the argument's type for the example call."""
    kind = spec.get("type")
    if "enum" in spec:
        return spec["enum"][0]
    if kind == "integer" or kind == "number":
        return spec.get("minimum", 1)
    if kind == "boolean":
        return True
    if kind == "array":
        items = spec.get("items", {})
        inner = {
            n: _example(n, items.get("properties", {}).get(n, {}))
            for n in items.get("required", [])
        }
        return [inner] if items.get("type") == "object" else []
    if kind == "object":
        return {}
    return f"<{name}>"
