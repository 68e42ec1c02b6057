"""`toolhost` on the command line as a newcomer meets it: --json, a bad --root, a closed
pipe, a refusal that says how to allow, and a tools list whose summaries are whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TOOLHOST = [sys.executable, "-m", "lsp_server"]


def toolhost(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TOOLHOST, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=dict(os.environ),
        timeout=120,
        check=False,
    )


def test_call_json_prints_the_whole_result(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    done = toolhost("call", "read_file", '{"path": "a.txt"}', "--root", ".", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["isError"] is False and "alpha" in result["content"][0]["text"]


@pytest.mark.slow
def test_a_bad_root_is_a_clear_message_and_exit_code_2(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    missing = toolhost("call", "ls", "{}", "--root", "nowhere", cwd=tmp_path)
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr == "toolhost: --root nowhere does not exist; pass the workspace folder\n"
    a_file = toolhost("call", "ls", "{}", "--root", "a.txt", cwd=tmp_path)
    assert a_file.returncode == 2
    assert a_file.stderr == "toolhost: --root a.txt is not a folder; pass the workspace folder\n"


def test_tools_json_into_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    done = subprocess.run(
        f"{sys.executable} -m lsp_server tools --json | head -c 10",
        shell=True,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.stdout == "[\n  {\n    "
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


@pytest.mark.slow
def test_refusal_without_a_terminal_mentions_yes_and_says_its_advice_once(tmp_path: Path) -> None:
    done = toolhost("call", "write_file", '{"path": "n.txt", "content": "x"}', cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.startswith("permission.unattended: write_file was not allowed")
    assert done.stdout.count("do not retry") == 1 and done.stdout.count("ask the user") == 0
    assert "pass --yes to allow it" in done.stderr
    assert not (tmp_path / "n.txt").exists()


def test_tools_summaries_are_whole_sentences(tmp_path: Path) -> None:
    done = toolhost("tools", "--surface", "full", cwd=tmp_path)
    [glob] = [line for line in done.stdout.splitlines() if line.strip().startswith("glob ")]
    assert glob.endswith('(e.g. "**/*.py", "src/**/*.{ts,tsx}")'), glob


@pytest.mark.slow
def test_a_background_job_started_by_call_is_said_to_stop_with_it(tmp_path: Path) -> None:
    """`toolhost call` runs one call: the job's result says to read it later with job_output,
    which no later `toolhost call` can; the command says the job stopped with it, and it
    did (its process is gone)."""
    arguments = '{"command": "sleep 60", "run_in_background": true}'
    done = toolhost("call", "--yes", "bash", arguments, "--root", ".", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert 'Started background job "bash-1"' in done.stdout, done.stdout
    assert "toolhost: stopped the background job bash-1" in done.stderr, done.stderr
    pid = done.stdout.split("(pid ", 1)[1].split(")", 1)[0]
    assert not Path(f"/proc/{pid}").exists()
    plain = toolhost("call", "--yes", "bash", '{"command": "echo hi"}', "--root", ".", cwd=tmp_path)
    assert "stopped the background job" not in plain.stderr, plain.stderr
