"""Network by allow list (issue 27): a sandboxed `curl` reaches a listed loopback test
server without a prompt, through toolhost's proxy, and cannot reach an unlisted one; the
result names what was blocked. Real bubblewrap, real curl, test servers on 127.0.0.1 only
(a refused name is `blocked.invalid`, refused before anything resolves it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsp_server.compose import build_runtime
from lsp_server.config.tree import Config, structure_config
from lsp_server.home.dirs import Dirs
from lsp_server.protocol import ApproveParams, CallParams
from tests.conftest import require_program
from tests.helpers import call_tool, fixed_page, loopback_http, make_runtime, text_of

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def listed() -> Iterator[str]:
    with loopback_http(fixed_page(b"listed server says hi\n", "text/plain")) as url:
        yield url


@pytest.fixture
def unlisted() -> Iterator[str]:
    with loopback_http(fixed_page(b"unlisted server\n", "text/plain")) as url:
        yield url


async def call_bash(
    tmp_path: Path, settings: dict[str, Any], command: str, **arguments: Any
) -> tuple[str, list[str], bool]:
    """(result text, approval prompts, is_error) of one bash call through the real policy
    engine, with an asker that denies and records every prompt."""
    problems: list[str] = []
    config = structure_config(settings, problems, Config())
    assert problems == []
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    prompts: list[str] = []

    async def deny(request: ApproveParams) -> dict[str, Any]:
        prompts.append(request.title)
        return {"decision": "deny"}

    dirs = Dirs(state=tmp_path / "state", config=tmp_path / "config")
    runtime, lifecycle = build_runtime([root], config, dirs=dirs, asker=deny, long_lived=False)
    try:
        result = await runtime.call(
            CallParams(name="bash", arguments={"command": command, **arguments}, session="s")
        )
    finally:
        await lifecycle.shutdown()
    return text_of(result), prompts, result.is_error


def _port(url: str) -> str:
    return url.rsplit(":", 1)[1]


async def test_listed_server_reached_unlisted_blocked_and_named(
    bwrap: str, tmp_path: Path, listed: str, unlisted: str
) -> None:
    require_program("curl", "the network test runs a real HTTP client")
    settings = {"shell": {"sandbox_network_allow": [f"127.0.0.1:{_port(listed)}"]}}
    command = (
        f"curl -sS {listed}/ && curl -sS -p {listed}/tunnel; "
        f"curl -sSf {unlisted}/ ; echo unlisted=$?; "
        "curl -sS https://blocked.invalid/ ; echo name=$?"
    )
    text, prompts, is_error = await call_bash(tmp_path, settings, command)
    assert not is_error, text
    assert prompts == []  # sandboxed: no approval was asked for
    assert text.count("listed server says hi") == 2  # plain HTTP and a CONNECT tunnel
    assert "unlisted server" not in text
    # curl: the proxy refused with 403 (-f: exit 22), and refused the CONNECT (exit 56).
    assert "unlisted=22" in text and "name=56" in text
    assert (
        f"blocked: 127.0.0.1:{_port(unlisted)} (not in sandbox_network_allow); "
        'ask with sandbox: "network"' in text
    )
    assert "blocked: blocked.invalid:443 (not in sandbox_network_allow)" in text


async def test_nothing_is_listed_by_default(bwrap: str, tmp_path: Path, listed: str) -> None:
    """No allow list, no proxy: the sandbox has no network at all (as before)."""
    require_program("curl", "the network test runs a real HTTP client")
    text, prompts, _ = await call_bash(tmp_path, {}, f"curl -sSf {listed}/; echo rc=$?")
    assert prompts == []
    assert "listed server says hi" not in text and "rc=7" in text  # connection refused


async def test_a_server_the_command_starts_itself_stays_reachable(
    bwrap: str, tmp_path: Path
) -> None:
    """The sandbox's own loopback is the command's: its own servers do not go to the proxy."""
    require_program("curl", "the network test runs a real HTTP client")
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "page.txt").write_text("served inside\n")
    (tmp_path / "ws" / "serve.sh").write_text(
        "python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 &\n"
        "for i in $(seq 100); do curl -sSf 127.0.0.1:8765/page.txt 2>/dev/null && break; "
        "sleep 0.1; done\nkill %1\n"
    )
    settings = {"shell": {"sandbox_network_allow": ["127.0.0.1:9"]}}  # the proxy runs
    text, _, _ = await call_bash(tmp_path, settings, "bash serve.sh")
    assert "served inside" in text  # (tries before it listened went to the proxy)


async def test_read_only_mode_has_no_network_at_all(
    bwrap: str, tmp_path: Path, listed: str
) -> None:
    require_program("curl", "the network test runs a real HTTP client")
    settings = {
        "policy": {"mode": "readOnly"},
        "shell": {"sandbox_network_allow": [f"127.0.0.1:{_port(listed)}"]},
    }
    text, _, _ = await call_bash(tmp_path, settings, f"curl -sS {listed}/; echo rc=$?")
    assert "listed server says hi" not in text
    assert "rc=7" in text  # no proxy at all: nothing listens in the sandbox


async def test_a_background_job_names_what_was_blocked(bwrap: str, tmp_path: Path) -> None:
    require_program("curl", "the network test runs a real HTTP client")
    root = tmp_path / "ws"
    root.mkdir()
    runtime = make_runtime(root, {"shell": {"sandbox_network_allow": ["127.0.0.1:9"]}})
    command = "curl -sS https://blocked.invalid/; echo rc=$?"
    started = await call_tool(runtime, "bash", {"command": command, "run_in_background": True})
    job_id = text_of(started).split('"')[1]
    text = ""
    for _ in range(20):  # each call waits until the job ends (or 30 s)
        text = text_of(
            await call_tool(
                runtime, "job_output", {"job_id": job_id, "wait": True, "timeout_ms": 30000}
            )
        )
        if "rc=" in text and "still running" not in text:
            break
    assert "rc=56" in text
    assert (
        'blocked: blocked.invalid:443 (not in sandbox_network_allow); ask with sandbox: "network"'
        in text
    )
