"""Commands that talk back over the MCP face: `toolhost mcp` as a subprocess driven by the
official SDK client. A prompt returns at once, job_input answers it (directly on the full
surface, through use_capability on the core one), python3 -i is driven, less is shown as
its screen. Real programs in the real bubblewrap sandbox."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from lsp_server.sandbox.platforms import find_backend
from tests.conftest import missing_part, require_program
from tests.mcp.clients import mcp_session, text_of

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def sandbox() -> None:
    require_program("bwrap", "commands run in toolhost's bubblewrap sandbox")
    found = find_backend(os.environ.get("PATH"))
    if found.problem is not None:
        missing_part(found.problem)


def _job(text: str) -> str:
    found = re.search(r'job_input \{"job_id": "(bash-\d+)"', text)
    assert found, text
    return found.group(1)


async def test_prompt_python_and_less_over_mcp(ws: Path) -> None:
    (ws / "README.md").write_text("".join(f"row {n}\n" for n in range(1, 101)))
    async with mcp_session(ws) as session:
        asked = await session.call_tool("bash", {"command": 'read -p "Name: " n; echo "hi $n"'})
        assert "waiting for input: `Name:`" in text_of(asked)
        answered = await session.call_tool(
            "job_input", {"job_id": _job(text_of(asked)), "text": "Ada\n"}
        )
        assert not answered.is_error and "hi Ada" in text_of(answered)

        python = await session.call_tool("bash", {"command": "python3 -i -q"})
        job = _job(text_of(python))
        for line in ("a = 20\n", "b = 22\n"):
            step = await session.call_tool("job_input", {"job_id": job, "text": line})
            assert not step.is_error, text_of(step)
        total = await session.call_tool("job_input", {"job_id": job, "text": "print(a + b)\n"})
        assert "42" in text_of(total)
        await session.call_tool("job_kill", {"job_id": job})

        less = await session.call_tool("bash", {"command": "less README.md", "terminal": True})
        screen = text_of(less)
        assert "row 1\n" in screen and "row 39" in screen and "row 41" not in screen
        quit_ = await session.call_tool("job_input", {"job_id": _job(screen), "text": "q"})
        assert "[status: exited 0]" in text_of(quit_)


async def test_job_input_through_use_capability_on_the_core_surface(ws: Path) -> None:
    async with mcp_session(ws, "--surface", "core") as session:
        listed = {tool.name for tool in (await session.list_tools()).tools}
        assert "job_input" not in listed and "use_capability" in listed
        asked = await session.call_tool("bash", {"command": 'read -p "Name: " n; echo "hi $n"'})
        typed = await session.call_tool(
            "use_capability",
            {
                "action": "call",
                "id": "tool:job_input",
                "arguments": {"job_id": _job(text_of(asked)), "text": "Ada\n"},
            },
        )
        assert not typed.is_error, text_of(typed)
        assert "hi Ada" in text_of(typed)
