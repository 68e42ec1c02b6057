"""Driving `toolhost acp` from pytest: the official ACP SDK as the editor (sdk_editor.mjs)
and, for the proxy's own tests, the SCRIPTED TEST AGENT (scripted_agent.mjs, SDK-built, not
a real agent); or a raw JSON-lines editor for input no SDK would send."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from tests.conftest import missing_part, require_program

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SDK_MODULES = REPO / ".tools" / "acp-sdk" / "node_modules"
SCRIPTS = ("sdk_editor.mjs", "scripted_agent.mjs")
TIMEOUT = 120


def node_folder(tmp_path: Path) -> Path:
    """A folder holding the test scripts beside the SDK's node_modules (ESM finds packages
    only in node_modules folders above the importing file)."""
    if not (SDK_MODULES / "@agentclientprotocol" / "sdk" / "package.json").is_file():
        missing_part("the ACP SDK is not installed (scripts/setup/65-acp.sh)")
    require_program("node", "the ACP SDK runs on Node")
    folder = tmp_path / "acp-node"
    folder.mkdir(exist_ok=True)
    link = folder / "node_modules"
    if not link.exists():
        link.symlink_to(SDK_MODULES)
    for name in SCRIPTS:
        shutil.copy(HERE / name, folder / name)
    return folder


def toolhost_acp(*agent: str, options: tuple[str, ...] = ()) -> list[str]:
    return [sys.executable, "-m", "lsp_server", "acp", *options, "--", *agent]


@attrs.define
class EditorRun:
    events: list[dict[str, Any]]
    stderr: str

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [event for event in self.events if event.get("event") == kind]

    def reports(self) -> list[dict[str, Any]]:
        """What the scripted agent reported after each prompt."""
        found = []
        for event in self.of("update"):
            update = event["params"]["update"]
            if update.get("sessionUpdate") == "agent_message_chunk":
                text = update["content"].get("text", "")
                if text.startswith('{"results"'):
                    found.append(json.loads(text))
        return found

    def results(self) -> list[dict[str, Any]]:
        return [result for report in self.reports() for result in report["results"]]


def write_plan(
    folder: Path,
    command: list[str],
    cwd: Path,
    prompts: list[Any],
    *,
    permissions: list[str] | None = None,
    client_capabilities: dict[str, Any] | None = None,
    buffers: dict[str, str] | None = None,
) -> Path:
    """The SDK editor's plan (prompts that are not text are sent as JSON)."""
    plan = {
        "command": command,
        "cwd": str(cwd),
        "prompts": [p if isinstance(p, str) else json.dumps(p) for p in prompts],
        "permissions": permissions or [],
        "clientCapabilities": client_capabilities or {},
        "buffers": buffers or {},
    }
    plan_path = folder / "plan.json"
    plan_path.write_text(json.dumps(plan), encoding="utf-8")
    return plan_path


def events_of(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith('{"event"')]


def run_editor(
    folder: Path,
    command: list[str],
    cwd: Path,
    prompts: list[Any],
    *,
    permissions: list[str] | None = None,
    client_capabilities: dict[str, Any] | None = None,
    buffers: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    timeout: float = TIMEOUT,
) -> EditorRun:
    """Run the SDK editor through one session with these prompts."""
    plan_path = write_plan(
        folder,
        command,
        cwd,
        prompts,
        permissions=permissions,
        client_capabilities=client_capabilities,
        buffers=buffers,
    )
    completed = subprocess.run(
        ["node", str(folder / "sdk_editor.mjs"), str(plan_path)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
        cwd=cwd,
    )
    return EditorRun(events_of(completed.stdout), completed.stderr)


def scripted_agent(folder: Path) -> tuple[str, ...]:
    return ("node", str(folder / "scripted_agent.mjs"))


def audit_lines() -> list[dict[str, Any]]:
    path = Path(os.environ["TOOLHOST_STATE_DIR"]) / "audit.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def iter_lines(stream: Any) -> Iterator[dict[str, Any]]:
    for line in stream:
        if line.strip():
            yield json.loads(line)
