"""The shadow repository's git processes end with the server (procs/children.py: nothing
outlives it): a home folder's first `git add -A` went on writing objects into the state
folder for tens of seconds after `toolhost mcp` had exited."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from lsp_server.procs.children import pid_alive

SERVER = """
import sys
from pathlib import Path
from lsp_server.checkpoints.shadow.isolated_git import IsolatedGit

git = IsolatedGit(Path(sys.argv[1]), Path(sys.argv[2]))
git.init()
print("ready", flush=True)
git.run("add", "--pathspec-from-file=-")  # reads the test's pipe, which stays open
"""


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def test_a_shadow_git_ends_when_the_server_is_killed(tmp_path: Path) -> None:
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(tmp_path / "state"), str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert server.stdout is not None and server.stdout.readline() == b"ready\n"
        deadline = time.monotonic() + 30
        while not (git := children(server.pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        [pid] = git
        assert "git" in Path(f"/proc/{pid}/cmdline").read_text()
        os.kill(server.pid, signal.SIGKILL)
        server.wait(30)
        deadline = time.monotonic() + 30
        while pid_alive(pid) and "git" in _command(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not (pid_alive(pid) and "git" in _command(pid))
        assert not (tmp_path / "state" / "index.lock").exists()
    finally:
        server.kill()
        server.wait(30)


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return ""
