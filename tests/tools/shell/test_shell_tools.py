"""bash, job_output, job_kill and the minimal bash through the real runtime (dispatch,
validation, output contract), in process."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from lsp_server.core.client import NoClient
from lsp_server.runtime.dispatch import Runtime
from lsp_server.shell.jobs import JobManager
from tests.helpers import call_tool, make_runtime, text_of
from tests.shell.procs import pids_running


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    return root


@pytest.fixture
async def runtime(root: Path) -> AsyncIterator[Runtime]:
    runtime = make_runtime(root, {"shell": {"max_timeout_ms": 30_000, "kill_grace_seconds": 0.5}})
    yield runtime
    await stop_jobs(runtime)


async def stop_jobs(runtime: Runtime) -> None:
    with contextlib.suppress(LookupError):  # no job was started
        await runtime.services.get(JobManager).shutdown()


def error_code(result: Any) -> str | None:
    return result.error.code if result.error else None


async def test_output_exit_code_and_folder_that_follows_cd(runtime: Runtime, root: Path) -> None:
    result = await call_tool(runtime, "bash", {"command": "echo hi; echo oops >&2; cd sub"})
    assert not result.is_error
    assert text_of(result) == "hi\noops\n[exit code 0]\n[working folder is now sub]"
    result = await call_tool(runtime, "bash", {"command": "pwd; exit 3"})
    assert text_of(result) == f"{root / 'sub'}\n[exit code 3]"
    # Another session keeps its own folder.
    other = await call_tool(runtime, "bash", {"command": "pwd"}, session="other")
    assert text_of(other).startswith(f"{root}\n")


async def test_folder_never_leaves_the_workspace(runtime: Runtime, root: Path) -> None:
    result = await call_tool(runtime, "bash", {"command": "cd /"})
    assert "[working folder stays .: the command ended in /, outside the workspace]" in (
        text_of(result)
    )
    assert text_of(await call_tool(runtime, "bash", {"command": "pwd"})).startswith(f"{root}\n")


async def test_timeout_bounds_are_clear_errors(runtime: Runtime) -> None:
    above_config = await call_tool(runtime, "bash", {"command": "true", "timeout_ms": 60_000})
    assert error_code(above_config) == "invalid_argument"
    assert "at most 30000" in text_of(above_config)
    above_schema = await call_tool(runtime, "bash", {"command": "true", "timeout_ms": 700_000})
    assert error_code(above_schema) == "schema_mismatch"
    zero = await call_tool(runtime, "bash", {"command": "true", "timeout_ms": 0})
    assert error_code(zero) == "schema_mismatch"


@pytest.mark.timeout(60)
async def test_timeout_returns_partial_output_with_the_error(runtime: Runtime) -> None:
    result = await call_tool(
        runtime, "bash", {"command": "echo begun; sleep 30", "timeout_ms": 500}
    )
    assert result.is_error
    assert error_code(result) == "timeout"
    text = text_of(result)
    assert text.startswith("begun\n")
    assert "still running after 500 ms" in text
    assert "after the command ended" not in text


@pytest.mark.timeout(60)
async def test_leftover_processes_are_named_in_the_result(runtime: Runtime) -> None:
    # The command ends once its child has become `sleep 100.5` (a fork that has not exec'd
    # yet still shows the shell's command line to the scan).
    command = (
        "sleep 100.5 & pid=$!; "
        'until [ "$(tr "\\0" " " < /proc/$pid/cmdline)" = "sleep 100.5 " ]; do :; done; '
        "echo $pid"
    )
    result = await call_tool(runtime, "bash", {"command": command})
    pid = int(text_of(result).split("\n")[0])  # as the command saw it (in the sandbox)
    assert f"[killed 1 process still running after the command ended: {pid} sleep 100.5." in (
        text_of(result)
    )
    assert pids_running("sleep", "100.5") == []
    daemon = await call_tool(runtime, "bash", {"command": "setsid sleep 100 >/dev/null 2>&1 &"})
    assert "[the command daemonised (nohup/setsid/disown) 1 process; killed them:" in (
        text_of(daemon)
    )


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_huge_output_is_truthful_and_pageable(runtime: Runtime) -> None:
    result = await call_tool(runtime, "bash", {"command": "yes | head -c 200000000"})
    assert not result.is_error
    text = text_of(result)
    dropped = 200_000_000 - 8 * 1024 * 1024
    # The visible tail says what was lost; the stored full capture names the gap in place.
    assert f"[output was 200000000 bytes: {dropped} bytes in the middle were not kept" in text
    assert result.meta.truncated
    assert result.meta.result_ref is not None
    session = runtime.sessions.get("default")
    page = session.results.page(result.meta.result_ref, 4 * 1024 * 1024 - 2, 300)
    assert f"{dropped} bytes of output dropped here" in page.text


async def test_bash_grants_no_file_observation(runtime: Runtime, root: Path) -> None:
    await call_tool(runtime, "bash", {"command": "echo old > made.txt"})
    edit = await call_tool(
        runtime, "edit_file", {"path": "made.txt", "old_string": "old", "new_string": "new"}
    )
    assert error_code(edit) == "FS_NOT_OBSERVED"
    await call_tool(runtime, "read_file", {"path": "made.txt"})
    edit = await call_tool(
        runtime, "edit_file", {"path": "made.txt", "old_string": "old", "new_string": "new"}
    )
    assert not edit.is_error
    assert (root / "made.txt").read_text() == "new\n"


@pytest.mark.timeout(60)
async def test_background_job_through_the_tools(runtime: Runtime) -> None:
    command = f"{sys.executable} -c \"print('ready', flush=True); import time; time.sleep(100)\""
    started = await call_tool(runtime, "bash", {"command": command, "run_in_background": True})
    text = text_of(started)
    assert text.startswith('Started background job "bash-1"')
    waited = await call_tool(
        runtime, "job_output", {"job_id": "bash-1", "wait": True, "filter": "^ready$"}
    )
    assert text_of(waited) == ("ready\n[filter: 1 of 1 new lines matched]\n[status: running]")
    empty = await call_tool(runtime, "job_output", {"job_id": "bash-1"})
    assert text_of(empty) == "(no new output)\n[status: running]"
    bad = await call_tool(runtime, "job_output", {"job_id": "bash-1", "filter": "(unclosed"})
    assert error_code(bad) == "invalid_argument"
    assert "not a valid regular expression" in text_of(bad)
    missing = await call_tool(runtime, "job_output", {"job_id": "bash-9"})
    assert error_code(missing) == "job.not_found"
    killed = await call_tool(runtime, "job_kill", {"job_id": "bash-1"})
    assert text_of(killed).startswith("Killed job bash-1")
    again = await call_tool(runtime, "job_kill", {"job_id": "bash-1"})
    assert "had already finished [status: killed]" in text_of(again)
    client = runtime.client
    assert isinstance(client, NoClient)
    updates = [params for method, params in client.notifications if method == "toolhost/jobUpdate"]
    assert [(u.job_id, u.status) for u in updates] == [("bash-1", "running"), ("bash-1", "killed")]


@pytest.mark.slow
async def test_job_limit_is_a_clear_error(root: Path) -> None:
    runtime = make_runtime(root, {"shell": {"max_background_jobs": 1}})
    try:
        first = await call_tool(
            runtime, "bash", {"command": "sleep 100", "run_in_background": True}
        )
        assert not first.is_error
        second = await call_tool(
            runtime, "bash", {"command": "sleep 100", "run_in_background": True}
        )
        assert error_code(second) == "job.limit"
    finally:
        await stop_jobs(runtime)


async def test_minimal_surface_bash(runtime: Runtime) -> None:
    result = await call_tool(runtime, "bash", {"command": "echo hi; false"}, surface="minimal")
    assert text_of(result) == "hi\n[exit code 1]"
    extra = await call_tool(
        runtime, "bash", {"command": "true", "timeout_ms": 5}, surface="minimal"
    )
    assert error_code(extra) == "schema_mismatch"


async def test_policy_refusals_are_clear_errors(root: Path) -> None:
    read_only = make_runtime(root, mode="readOnly")
    denied = await call_tool(read_only, "bash", {"command": "touch x"})
    assert error_code(denied) == "permission.rule_denied"
    unattended = make_runtime(root, mode="default")
    refused = await call_tool(unattended, "bash", {"command": "touch x"})
    assert error_code(refused) == "permission.unattended"
    assert not (root / "x").exists()
    # job_output is read-only: allowed even in readOnly mode (and says what is missing).
    missing = await call_tool(read_only, "job_output", {"job_id": "bash-1"})
    assert error_code(missing) == "job.not_found"


BINARY = f'{sys.executable} -c "import sys; sys.stdout.buffer.write(bytes(range(256)) * 4)"'


async def test_binary_output_is_named_not_shown(runtime: Runtime) -> None:
    """Bytes that are not text would reach the model as U+FFFD and control characters:
    tokens that say nothing. The result says what they were and how to look at them."""
    result = await call_tool(runtime, "bash", {"command": BINARY})
    text = text_of(result)
    assert text.startswith("[1024 bytes of output, mostly binary (not text): not shown."), text
    assert "xxd out.bin" in text and "\ufffd" not in text and "\x01" not in text
    # Text with a few odd bytes stays text: NUL-separated names, a Latin-1 word.
    mixed = await call_tool(runtime, "bash", {"command": r"printf 'a\0b\0'; printf 'caf\xe9\n'"})
    assert text_of(mixed) == "a\0b\0caf\ufffd\n[exit code 0]"


@pytest.mark.timeout(60)
async def test_a_background_job_s_binary_output_is_named_too(runtime: Runtime) -> None:
    command = f"{BINARY}; echo; sleep 100"
    await call_tool(runtime, "bash", {"command": command, "run_in_background": True})
    for _ in range(50):  # until the bytes have arrived (a complete line)
        read = text_of(await call_tool(runtime, "job_output", {"job_id": "bash-1"}))
        if not read.startswith("(no new output)"):
            break
        await anyio.sleep(0.1)
    assert read.startswith("[1025 bytes of output, mostly binary (not text): not shown."), read
    await call_tool(runtime, "job_kill", {"job_id": "bash-1"})
