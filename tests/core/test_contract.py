"""The canonical contract (safety.md §1): documented, valid, canonical, generated, stable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lsp_server.cli import schemas as schemagen
from lsp_server.core.contract import canonical_json
from lsp_server.runtime.validation import check_schema
from lsp_server.tools.registry import TOOL_MODULES, build_registry

ROOT = Path(__file__).resolve().parents[2]


def _properties(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for name, sub in schema.get("properties", {}).items():
        found.append((name, sub))
        if sub.get("type") == "object":
            found += _properties(sub)
        if sub.get("type") == "array" and isinstance(sub.get("items"), dict):
            found += _properties(sub["items"])
    return found


def test_every_tool_is_documented_valid_and_canonical() -> None:
    registry = build_registry()
    table = (ROOT / "docs" / "TOOL_CONTRACT.md").read_text()
    for tool in registry.all_tools():
        entry = tool.contract
        assert entry.description.strip(), entry.name
        assert f"| `{entry.name}` | {'yes' if entry.labelled_read_only else 'no'} |" in table
        check_schema(entry.schema)
        schema = dict(entry.schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        for name, sub in _properties(schema):
            assert sub.get("description"), f"{entry.name}.{name} has no description"
        canonical = entry.canonical_schema
        assert canonical_json(json.loads(canonical)) == canonical


def test_a_file_argument_is_called_path_in_every_tool() -> None:
    """One name for one idea: a single file or folder is `path`, two are `<role>_path`."""
    for tool in build_registry().all_tools():
        names = [arg.name for arg in tool.contract.path_args]
        assert all(name == "path" or name.endswith("_path") for name in names), tool.name
        assert "file" not in tool.contract.schema.get("properties", {}), tool.name


def test_schemas_file_is_byte_equal_to_the_registry() -> None:
    registry = build_registry()
    document = json.loads((ROOT / "schemas" / "tools.json").read_text())
    by_name = {t["name"]: t for t in document["tools"]}
    for tool in registry.surface("full"):
        listed = by_name[tool.name]
        assert canonical_json(listed["inputSchema"]) == tool.contract.canonical_schema
        assert listed["readOnly"] == tool.contract.labelled_read_only
    for surface in ("core", "full", "minimal"):
        assert document["surfaces"][surface]["hash"] == registry.hash(surface)


def test_generated_files_are_up_to_date() -> None:
    assert schemagen.stale_files(build_registry(), ROOT) == []


def test_hashes_are_stable_and_independent_of_registration_order() -> None:
    first = build_registry()
    reordered = type(first)(list(reversed(first.all_tools())))
    for surface in ("core", "full", "minimal"):
        assert first.hash(surface) == reordered.hash(surface)


def test_tool_modules_are_listed_explicitly() -> None:
    source = (ROOT / "lsp_server" / "tools" / "registry.py").read_text()
    for module in TOOL_MODULES:
        name = module.__name__.rsplit(".", 1)[1]
        assert f"    {name},\n" in source  # in the literal tuple, imported by name
    assert "importlib" not in source


def test_protocol_schema_covers_every_method() -> None:
    document = json.loads((ROOT / "schemas" / "protocol.json").read_text())
    methods = {m["method"] for m in document["methods"]}
    assert {
        "toolhost/tools",
        "toolhost/call",
        "toolhost/result",
        "toolhost/status",
        "toolhost/approve",
        "toolhost/saveDocument",
        "toolhost/didCall",
        "toolhost/jobUpdate",
    } <= methods
    call = document["$defs"]["CallParams"]["properties"]
    assert {"name", "arguments", "session", "callId", "batch", "workDoneToken"} <= set(call)
