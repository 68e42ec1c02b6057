"""Tools under /tmp stay visible in the sandbox (issue 27): PATH entries and the server's
own interpreter living under /tmp are bound read-only over the private /tmp, so a checkout
under /tmp runs its own venv's python inside the sandbox instead of failing with 127."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import attrs

from lsp_server.sandbox.bubblewrap import BubblewrapLayout
from lsp_server.sandbox.under_tmp import folders_under_tmp
from lsp_server.shell.runner import RunLimits, run_command

LIMITS = RunLimits(timeout_seconds=60, kill_grace_seconds=1.0, pipe_wait_seconds=2.0)


def test_which_folders() -> None:
    found = folders_under_tmp(
        path_env="/usr/bin:/tmp/ci/.venv/bin:/tmp:/tmp/ci/.venv/bin/sub:relative:/tmp/tc/bin",
        home="/tmp/home",
        interpreter=[Path("/tmp/ci/.venv"), Path("/usr/lib/python3")],
    )
    assert Path("/tmp") not in found  # never the whole /tmp
    assert {Path("/tmp/ci/.venv"), Path("/tmp/tc/bin"), Path("/tmp/home")} <= set(found)
    assert Path("/tmp/ci/.venv/bin") not in found  # inside a folder bound already
    assert all(p.is_relative_to("/tmp") for p in found)


async def test_a_venv_and_a_path_entry_under_tmp_run_in_the_sandbox(
    layout: BubblewrapLayout, tmp_path: Path
) -> None:
    venv = tmp_path / "checkout" / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    tools = tmp_path / "toolchain" / "bin"
    tools.mkdir(parents=True)
    (tools / "mytool").write_text("#!/bin/sh\necho mytool runs\n")
    (tools / "mytool").chmod(0o755)
    python = venv / "bin" / "python"
    command = f"PATH={tools}:$PATH; mytool && {python} -c 'import sys; print(sys.prefix)'"
    bare = attrs.evolve(layout, under_tmp=())
    hidden = await run_command(command, layout.roots[0], LIMITS, launcher=bare)
    assert hidden.exit_code == 127, hidden.output  # what CI in a checkout under /tmp saw
    visible = attrs.evolve(
        layout,
        under_tmp=folders_under_tmp(path_env=str(tools), home="", interpreter=[venv]),
    )
    result = await run_command(command, layout.roots[0], LIMITS, launcher=visible)
    assert result.exit_code == 0, result.output
    assert result.output.split() == ["mytool", "runs", str(venv)]
    wrote = await run_command(f"touch {venv}/x", layout.roots[0], LIMITS, launcher=visible)
    assert wrote.exit_code != 0 and not (venv / "x").exists()  # read-only
