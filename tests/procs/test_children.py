"""The parent-death signal: a child started with the hook dies when its parent is killed
with SIGKILL (the server, for child language servers and unsandboxed commands)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.shell.procs import wait_gone

PARENT = """
import subprocess, sys
from lsp_server.procs.children import parent_death_hook
hook = parent_death_hook() if sys.argv[1] == "hook" else None
child = subprocess.Popen(["sleep", "300"], preexec_fn=hook)
print(child.pid, flush=True)
sys.stdin.read()
"""


async def _child_after_parent_killed(mode: str) -> list[int]:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    alive = await wait_gone([child], limit_seconds=5)
    for pid in alive:
        subprocess.run(["kill", "-9", str(pid)], check=False)
    return alive


@pytest.mark.timeout(60)
async def test_child_dies_with_its_parent() -> None:
    assert await _child_after_parent_killed("hook") == []


@pytest.mark.slow
@pytest.mark.timeout(60)
async def test_without_the_hook_the_child_would_survive() -> None:
    # The reference: the same child without the hook outlives a SIGKILLed parent.
    assert len(await _child_after_parent_killed("none")) == 1
