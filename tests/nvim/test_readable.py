"""Approvals and views a person can read, in real Neovim: the server found by setup({}),
a human :Toolhost status, and :Toolhost activity rows that show a call's result."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.nvim.conftest import Neovim, server_command

pytestmark = pytest.mark.real_client


def path_without_toolhost() -> str:
    """PATH minus every folder that holds a `toolhost` executable."""
    folders = os.environ.get("PATH", "").split(os.pathsep)
    kept = [f for f in folders if f and not os.access(Path(f) / "toolhost", os.X_OK)]
    return os.pathsep.join(kept)


def install_workspace_venv(workspace: Path) -> Path:
    """<workspace>/.venv/bin/toolhost: this checkout's server, as `pip install` would put it."""
    bin_dir = workspace / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    target = bin_dir / "toolhost"
    command = server_command()[:-1]  # without "serve"
    target.write_text("#!/bin/sh\nexec " + " ".join(f"'{c}'" for c in command) + ' "$@"\n')
    target.chmod(0o755)
    return target


def test_setup_with_workspace_venv_finds_the_workspace_venv(neovim: Neovim) -> None:
    toolhost = install_workspace_venv(neovim.workspace)
    out = neovim.run("setup_venv", PATH=path_without_toolhost()).out
    assert out["toolhost_on_path"] == ""
    assert out["server"]["cmd"] == [str(toolhost), "serve"]
    assert "workspace virtualenv" in out["server"]["found_by"]
    assert out["root_dir"] == str(neovim.workspace)
    assert "hello from the fixture" in out["text"]
    health = "\n".join(out["health_lines"])
    assert f"server command: {toolhost} serve, from the workspace virtualenv" in health
    assert "ERROR" not in health


def test_setup_without_a_server_says_how_to_fix_it(neovim: Neovim) -> None:
    out = neovim.run("setup_missing", PATH=path_without_toolhost()).out
    assert out["running"] is False
    [error] = [n for n in out["notified"] if n["level"] == 4]  # vim.log.levels.ERROR
    assert "toolhost was not found" in error["message"]
    assert ":checkhealth toolhost" in error["message"]
    health = "\n".join(out["health_lines"])
    assert "ERROR toolhost was not found" in health
    venv = f"cd {neovim.workspace} && python3 -m venv .venv && .venv/bin/pip install "
    assert venv + "/path/to/toolhost_runtime-VERSION-py3-none-any.whl" in health
    assert "setup({ workspace_venv = true })" in health
    # "toolhost" on PyPI is another project: the fix never names it bare.
    assert re.search(r"pip install toolhost\b(?!-VERSION)", health) is None, health


def test_status_is_human_and_activity_shows_results(neovim: Neovim) -> None:
    out = neovim.run("status_activity").out
    status = out["status_lines"]
    text = "\n".join(status)
    assert status[0].startswith("toolhost ") and str(neovim.workspace) in status[0]
    assert "Background jobs" in status
    [job] = [line for line in status if "sleep 30" in line]
    assert "running" in job and re.search(r"started \d\d:\d\d:\d\d \(\d+ s ago\)", job)
    assert re.search(r"\d{9,}\.\d", text) is None  # no epoch floats
    assert "{" not in text and "= " not in text  # no Lua table
    assert any(line.strip().startswith("default") and "calls" in line for line in status)

    rows = out["activity_lines"]
    assert rows[0].startswith("toolhost activity by agent")
    assert rows[2].startswith("Neovim (session ") and "call(s)" in rows[2]  # the group
    assert "read_file" in rows[3] and "ok" in rows[3] and "notes.md" in rows[3]
    assert "bash" in rows[4]
    assert out["action_labels"][0] == "Show the result"
    result = out["result_lines"]
    assert result[0] == f"# read_file {out['read_call_id']}: ok"
    assert any("line four" in line for line in result)


def test_a_workspace_venv_is_not_started_on_its_own(neovim: Neovim) -> None:
    """An agent that writes <workspace>/.venv/bin/toolhost gets no process started outside
    the sandbox at the next setup({}) (issue 41): the error says how to opt in."""
    marker = neovim.home / "venv-toolhost-ran"
    bin_dir = neovim.workspace / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "toolhost").write_text(f"#!/bin/sh\ntouch '{marker}'\n")
    (bin_dir / "toolhost").chmod(0o755)
    out = neovim.run("setup_missing", PATH=path_without_toolhost()).out
    assert out["running"] is False
    assert not marker.exists()
    [error] = [n for n in out["notified"] if n["level"] == 4]  # vim.log.levels.ERROR
    assert "is not started on its own" in error["message"]
    assert "setup({ workspace_venv = true })" in error["message"]
