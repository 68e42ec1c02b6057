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
def test_refusal_without_a_terminal_is_words_for_a_person_and_mentions_yes(tmp_path: Path) -> None:
    """What a person reads names the cause and what to do; the model's text (its recovery
    "do not retry the same call") is only in --json."""
    call = ("call", "write_file", '{"path": "n.txt", "content": "x"}', "--root", ".")
    done = toolhost(*call, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout == (
        "Not run: write_file needs your approval: changes need the user's approval by "
        "default. [permission.unattended]\n"
    )
    assert "pass --yes to allow it" in done.stderr and "do not retry" not in done.stderr
    assert not (tmp_path / "n.txt").exists()
    as_json = json.loads(toolhost(*call, "--json", cwd=tmp_path).stdout)
    assert as_json["error"]["code"] == "permission.unattended"
    assert as_json["error"]["recovery"].startswith("do not retry the same call")


def test_tools_summaries_are_whole_sentences(tmp_path: Path) -> None:
    done = toolhost("tools", "--surface", "full", cwd=tmp_path)
    [glob] = [line for line in done.stdout.splitlines() if line.strip().startswith("glob ")]
    assert glob.endswith('(e.g. "**/*.py", "src/**/*.{ts,tsx}")'), glob


@pytest.mark.slow
def test_a_background_job_is_refused_before_it_starts(tmp_path: Path) -> None:
    """`toolhost call` ends after one call, so a job it started would die with it: the call
    is refused up front (exit 2, the way to run it said), never "Started ..." and killed."""
    marker = tmp_path / "ran"
    arguments = json.dumps({"command": f"touch {marker}; sleep 60", "run_in_background": True})
    done = toolhost("call", "--yes", "bash", arguments, "--root", ".", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, ""), done.stdout
    assert "Started background job" not in done.stderr
    assert done.stderr.startswith("toolhost: not run: this would start a background job")
    assert "Run the command in the foreground (without run_in_background)" in done.stderr
    assert not marker.exists()
    later = toolhost("call", "job_output", '{"job_id": "bash-1"}', "--root", ".", cwd=tmp_path)
    assert (later.returncode, later.stdout) == (2, "")
    assert "there are no background jobs for job_output on the command line" in later.stderr
    plain = toolhost("call", "--yes", "bash", '{"command": "echo hi"}', "--root", ".", cwd=tmp_path)
    assert plain.returncode == 0 and plain.stdout.startswith("hi"), plain.stdout
