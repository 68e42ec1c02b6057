"""Commands without bubblewrap run under the supervisor: everything they start stays
findable (env -i setsid included) and ends with them, or with the server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from lsp_server.sandbox.lifetime import Supervised
from lsp_server.shell.jobs import JobManager
from lsp_server.shell.runner import RunLimits, run_command
from tests.helpers import SERVER_COMMAND, lsp_call, make_test_client
from tests.sandbox.test_sandbox_e2e import _path_without_bwrap
from tests.shell.procs import pids_running, wait_gone, wait_running

pytestmark = pytest.mark.timeout(120)
LIMITS = RunLimits(timeout_seconds=60, kill_grace_seconds=1.0)
# Until a process has become exactly `sleep N`: a fork that has not exec'd yet still shows
# the shell's command line (which names `sleep N` too) and would end the wait too early.
UNTIL_STARTED = "until pgrep -f '^sleep {0}$' >/dev/null; do :; done"


async def test_exit_status_folder_and_output(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    result = await run_command("echo out; cd sub; exit 3", tmp_path, LIMITS, launcher=Supervised())
    assert (result.output, result.exit_code) == ("out\n", 3)
    assert result.final_cwd == tmp_path / "sub"
    killed = await run_command("kill -9 $$", tmp_path, LIMITS, launcher=Supervised())
    assert killed.exit_code == -9


async def test_env_i_setsid_daemon_is_found_and_killed(tmp_path: Path) -> None:
    command = "env -i setsid sleep 972.1 >/dev/null 2>&1 & " + UNTIL_STARTED.format("972.1")
    result = await run_command(command, tmp_path, LIMITS, launcher=Supervised())
    assert result.exit_code == 0, result.output
    assert result.leftovers_killed
    assert [p.command for p in result.leftovers] == ["sleep 972.1"]
    assert pids_running("sleep", "972.1") == []


async def test_daemons_may_be_kept_when_configured(tmp_path: Path) -> None:
    limits = RunLimits(timeout_seconds=60, kill_grace_seconds=1.0, kill_daemons=False)
    command = "nohup sleep 972.2 >/dev/null 2>&1 & " + UNTIL_STARTED.format("972.2")
    result = await run_command(command, tmp_path, limits, launcher=Supervised())
    try:
        assert not result.leftovers_killed
        assert pids_running("sleep", "972.2") != []
    finally:
        for pid in pids_running("sleep", "972.2"):
            os.kill(pid, 9)


async def test_timeout_and_job_kill_end_re_parented_orphans(tmp_path: Path) -> None:
    command = "env -i setsid sleep 972.3 >/dev/null 2>&1 & sleep 300"
    limits = RunLimits(timeout_seconds=1.0, kill_grace_seconds=0.5)
    result = await run_command(command, tmp_path, limits, launcher=Supervised())
    assert result.timed_out
    assert await wait_gone(pids_running("sleep", "972.3")) == []
    manager = JobManager()
    job = await manager.start(
        "env -i setsid sleep 972.4 >/dev/null 2>&1 & sleep 300",
        tmp_path,
        "s1",
        LIMITS,
        launcher=Supervised(),
    )
    [daemon] = await wait_running("sleep", "972.4")
    assert await manager.kill(job, "test")
    assert await wait_gone([daemon]) == []


async def test_sigkill_of_the_server_without_bubblewrap(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", _path_without_bwrap(tmp_path / "shadow"))
    env = dict(os.environ, TOOLHOST_STATE_DIR=str(tmp_path / "state"))
    config = ClientServerConfig(
        server_command=SERVER_COMMAND, client_factory=make_test_client, server_env=env
    )
    client: LanguageClient = await config.start()  # type: ignore[assignment]
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=workspace.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
                initialization_options={"toolhost": {"policy": {"mode": "bypass"}}},
            )
        )
        server = client._server
        assert server is not None
        job = {
            "command": "env -i setsid sleep 972.5 >/dev/null 2>&1 & sleep 972.6",
            "run_in_background": True,
        }
        started = await lsp_call(client, "bash", job)
        assert not started["isError"], started
        sleepers = [*await wait_running("sleep", "972.5"), *await wait_running("sleep", "972.6")]
        assert len(sleepers) == 2
        server.kill()
        await server.wait()
        assert await wait_gone(sleepers, limit_seconds=20) == []
    finally:
        await client.stop()  # type: ignore[no-untyped-call]
