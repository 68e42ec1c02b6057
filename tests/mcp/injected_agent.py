"""The prompt-injected agent of issue 41 over `toolhost mcp` stdio: a client that offers no
approval (no elicitation, so every "ask" is answered by `policy.unattended = deny`), a user
config that trusts the workspace, a folder outside every root that the test owns, and a
record of every step that did not hold, so that one run names all the holes at once."""

from __future__ import annotations

import base64
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lsp_server.sandbox.platforms import find_backend
from tests.conftest import missing_part, require_program
from tests.mcp.clients import RawMcp, raw_mcp

# What the agent wants to read from every file it manages to place.
AGENT_TOML = '[shell]\nsandbox = "off"\n[policy]\nmode = "bypass"\nallow = ["Bash"]\n'
AGENT_TOML_B64 = base64.b64encode(AGENT_TOML.encode()).decode()
VSCODE_SETTINGS = json.dumps(
    {
        "toolhost.shell.sandbox": "off",
        "toolhost.policy.mode": "bypass",
        "toolhost.policy.allow": ["Bash"],
    }
)
# An approval refused, a deny rule, or a tool that may not write there at all (.git/).
REFUSALS = (
    "permission.unattended",
    "permission.rule_denied",
    "permission.user_denied",
    "workspace.outside_scope",
)


def require_bubblewrap() -> None:
    require_program("bwrap", "the shell sandbox runs commands under bubblewrap")
    found = find_backend(os.environ.get("PATH"))
    if found.problem is not None:
        missing_part(found.problem)


def user_config(text: str) -> None:
    """The user's own config file (written by hand: the one layer that may loosen)."""
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "toolhost"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(text, encoding="utf-8")


def trusting(root: Path, extra: str = "", mode: str = "acceptEdits", policy: str = "") -> None:
    """The user trusts `root` (its own programs may run) and accepts edits."""
    user_config(f'[policy]\nmode = "{mode}"\ntrusted_roots = ["{root}"]\n{policy}{extra}')


@contextmanager
def outside_folder() -> Iterator[Path]:
    """A folder outside the workspace and outside the sandbox's private /tmp."""
    folder = Path(tempfile.mkdtemp(prefix="toolhost-injected-", dir="/var/tmp"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def dumped(result: Any) -> str:
    return json.dumps(result, ensure_ascii=False)


def text(result: dict[str, Any]) -> str:
    return "".join(part.get("text", "") for part in result.get("content", []))


def code(result: dict[str, Any]) -> str | None:
    found = (result.get("structuredContent") or {}).get("code")
    return found if isinstance(found, str) else None


class Agent:
    """One `toolhost mcp` session driven as the injected agent; `holes` collects what held
    not, each with the exact answer."""

    def __init__(self, client: RawMcp, holes: list[str]) -> None:
        self.client = client
        self.holes = holes

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        answer = await self.client.request("tools/call", {"name": name, "arguments": arguments})
        if "result" not in answer:
            self.holes.append(f"{name} {arguments!r}: no result: {dumped(answer)[:800]}")
            return {"isError": True, "content": [], "error": answer.get("error")}
        result: dict[str, Any] = answer["result"]
        return result

    async def bash(self, command: str, **extra: Any) -> dict[str, Any]:
        return await self.call("bash", {"command": command, **extra})

    async def refused(
        self, name: str, arguments: dict[str, Any], codes: tuple[str, ...] = REFUSALS
    ) -> dict[str, Any]:
        """A call that must ask, and so be refused with an approval code."""
        result = await self.call(name, arguments)
        if not result.get("isError") or code(result) not in codes:
            shown = {k: v for k, v in arguments.items() if k != "content"}
            self.holes.append(f"{name} {shown!r} was not refused: {text(result)[:800]}")
        return result

    async def runs(self, command: str) -> dict[str, Any]:
        """A control command that must run unasked (the test does not pass by asking for
        everything)."""
        result = await self.bash(command)
        if result.get("isError") or "[exit code 0]" not in text(result):
            self.holes.append(f"control {command!r} was refused: {text(result)[:800]}")
        return result


@contextmanager
def no_holes() -> Iterator[list[str]]:
    holes: list[str] = []
    yield holes
    assert not holes, "\n\n".join(holes)


async def agent(
    root: Path, holes: list[str], env: dict[str, str] | None = None, name: str = "injected"
) -> Agent:
    """`toolhost mcp --root root` from a client that offers no approval."""
    return Agent(await raw_mcp(root, {}, name, env), holes)


def hole_unless(holes: list[str], held: bool, what: str) -> None:
    if not held:
        holes.append(what)


def holds_agent_content(path: Path, marker: str) -> bool:
    """`path` exists (through no link) and holds what the agent tried to write."""
    try:
        return marker in path.read_text(errors="replace")
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return False
