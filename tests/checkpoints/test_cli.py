"""`toolhost checkpoints` and `toolhost revert` as a user runs them (subprocesses)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

TOOLHOST = [sys.executable, "-m", "lsp_server"]


def toolhost(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TOOLHOST, *args], capture_output=True, text=True, check=False)


def test_list_and_revert_from_the_command_line(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("first\n")
    made = toolhost(
        "call",
        "bash",
        json.dumps({"command": "echo second > a.txt && echo new > b.txt"}),
        "--root",
        str(root),
        "--yes",
    )
    assert made.returncode == 0, made.stderr + made.stdout
    listed = toolhost("checkpoints", "--root", str(root), "--json")
    assert listed.returncode == 0, listed.stderr
    [checkpoint] = json.loads(listed.stdout)["checkpoints"]
    assert {(f["change"], f["path"]) for f in checkpoint["files"]} == {
        ("modified", "a.txt"),
        ("created", "b.txt"),
    }
    text = toolhost("checkpoints", "--root", str(root)).stdout
    assert checkpoint["callId"] in text and "created  b.txt" in text

    (root / "b.txt").write_text("changed by the user\n")
    reverted = toolhost("revert", checkpoint["callId"], "--root", str(root))
    assert reverted.returncode == 1  # one conflict
    assert "Reverted 1 file(s)" in reverted.stdout and "b.txt: changed since" in reverted.stdout
    assert "+changed by the user" in reverted.stdout  # its diff
    assert (root / "a.txt").read_text() == "first\n"
    assert (root / "b.txt").read_text() == "changed by the user\n"
    # The revert names the checkpoint that undoes it, in words every face can act on.
    undo = re.search(
        r"checkpoint (\S+): revert that to undo it \(from a shell: toolhost revert \1\)",
        reverted.stdout,
    )
    assert undo is not None, reverted.stdout
    redone = toolhost("revert", undo.group(1), "--root", str(root))
    assert redone.returncode == 0, redone.stdout + redone.stderr
    assert (root / "a.txt").read_text() != "first\n"

    unknown = toolhost("revert", "c-nope", "--root", str(root))
    assert unknown.returncode == 2 and "no checkpoint of a call 'c-nope'" in unknown.stderr
