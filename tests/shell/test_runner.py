"""The process runner on its own: real bash, real processes, no mocks."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_server.shell.runner import RunLimits, run_command
from tests.helpers import loopback_http
from tests.shell.procs import is_alive, processes_with_marker, read_pids, wait_gone

LIMITS = RunLimits(timeout_seconds=60, kill_grace_seconds=1.0, pipe_wait_seconds=2.0)


async def test_output_keeps_arrival_order_and_exit_code(tmp_path: Path) -> None:
    result = await run_command("echo one; echo two >&2; echo three; exit 3", tmp_path, LIMITS)
    assert result.output == "one\ntwo\nthree\n"
    assert result.exit_code == 3
    assert not result.timed_out


async def test_final_folder_follows_trailing_cd(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    result = await run_command("cd sub && pwd", tmp_path, LIMITS)
    assert result.final_cwd == (tmp_path / "sub").resolve()
    result = await run_command("cd sub; exit 4", tmp_path, LIMITS)
    assert result.final_cwd == (tmp_path / "sub").resolve()
    assert result.exit_code == 4


async def test_syntax_errors_name_the_command_line_not_a_wrapper(tmp_path: Path) -> None:
    result = await run_command("echo a\nif then", tmp_path, LIMITS)
    assert result.exit_code == 2
    assert "line 2" in result.output
    assert "toolhost" not in result.output


async def test_non_interactive_environment(tmp_path: Path) -> None:
    result = await run_command(
        "echo $GIT_EDITOR $GIT_TERMINAL_PROMPT $PAGER $GIT_PAGER $CI $npm_config_yes $TERM "
        "$DEBIAN_FRONTEND; test -t 0 || echo no-tty",
        tmp_path,
        LIMITS,
    )
    assert result.output == "true 0 cat cat 1 true dumb noninteractive\nno-tty\n"


async def test_read_returns_at_once_on_closed_stdin(tmp_path: Path) -> None:
    result = await run_command("read x; echo status=$?", tmp_path, LIMITS)
    assert result.output == "status=1\n"


async def test_python_input_does_not_wait(tmp_path: Path) -> None:
    result = await run_command(f"{sys.executable} -c 'input()'", tmp_path, LIMITS)
    assert result.exit_code == 1
    assert "EOFError" in result.output


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.name", "Test")
    _git(repo, "config", "user.email", "test@example.invalid")
    (repo / "a.txt").write_text("a\n")
    _git(repo, "add", "a.txt")
    return repo


@pytest.mark.timeout(60)
async def test_git_commit_without_message_opens_no_editor(repo: Path) -> None:
    result = await run_command("git commit", repo, LIMITS)
    # GIT_EDITOR=true leaves the message empty: git aborts instead of waiting.
    assert result.exit_code != 0
    assert "empty commit message" in result.output


class _Unauthorized(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="test"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_GET

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def unauthorized_remote() -> Iterator[str]:
    with loopback_http(_Unauthorized) as url:
        yield f"{url}/repo.git"


@pytest.mark.timeout(60)
async def test_git_push_to_remote_asking_for_password_fails(
    repo: Path, unauthorized_remote: str
) -> None:
    _git(repo, "commit", "-q", "-m", "first")
    result = await run_command(f"git push {unauthorized_remote} HEAD:main", repo, LIMITS)
    assert result.exit_code != 0
    assert "Authentication failed" in result.output or "could not read" in result.output


@pytest.mark.slow
@pytest.mark.timeout(60)
async def test_background_child_is_killed_after_the_command(tmp_path: Path) -> None:
    result = await run_command("sleep 100 & echo started $!", tmp_path, LIMITS)
    word, pid = result.output.split()
    assert word == "started"
    assert result.exit_code == 0
    assert [p.pid for p in result.leftovers] == [int(pid)]
    assert result.leftovers_killed
    assert result.pipe_held
    assert await wait_gone([int(pid)]) == []


@pytest.mark.timeout(60)
async def test_subshell_daemon_is_reported_and_killed(tmp_path: Path) -> None:
    # The subshell writes its child's pid; the command ends only once that child has become
    # `sleep 100` (a fork that has not exec'd yet still shows the subshell's command line).
    command = (
        "(sleep 100 > /dev/null 2>&1 & echo $! > daemon.pid) ; "
        'until [ "$(tr "\\0" " " < /proc/$(cat daemon.pid)/cmdline)" = "sleep 100 " ]; '
        "do :; done; echo hi"
    )
    result = await run_command(command, tmp_path, LIMITS)
    assert result.output == "hi\n"
    daemon = int((tmp_path / "daemon.pid").read_text())
    # The subshell itself may still be on its way out when the scan runs.
    assert (daemon, "sleep 100") in [(p.pid, p.command) for p in result.leftovers]
    assert result.leftovers_killed
    assert await wait_gone([p.pid for p in result.leftovers]) == []


@pytest.mark.timeout(60)
async def test_setsid_daemon_leaves_the_group_but_is_found_and_killed(tmp_path: Path) -> None:
    result = await run_command("setsid sleep 100 > /dev/null 2>&1 & echo $!", tmp_path, LIMITS)
    pid = int(result.output)
    assert result.daemonised
    assert [p.pid for p in result.leftovers] == [pid]
    # It really left the command's process group and session.
    assert result.leftovers[0].sid == pid
    assert result.leftovers_killed
    assert await wait_gone([pid]) == []


@pytest.mark.timeout(60)
async def test_daemon_may_be_kept_when_configured(tmp_path: Path) -> None:
    limits = RunLimits(timeout_seconds=60, kill_grace_seconds=1.0, kill_daemons=False)
    result = await run_command("nohup sleep 100 > /dev/null 2>&1 & echo $!", tmp_path, limits)
    pid = int(result.output)
    try:
        assert result.daemonised
        assert not result.leftovers_killed
        assert is_alive(pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.timeout(120)
async def test_timeout_kills_the_whole_group_including_grandchildren(tmp_path: Path) -> None:
    # A grandchild that ignores SIGTERM (ignored signals survive exec) needs the SIGKILL.
    command = (
        "sh -c 'trap \"\" TERM; sleep 300 & echo $! >> pids; sleep 300' & "
        "echo $! >> pids; echo partial; sleep 300"
    )
    limits = RunLimits(timeout_seconds=1.0, kill_grace_seconds=0.5)
    result = await run_command(command, tmp_path, limits)
    assert result.timed_out
    assert result.exit_code is None
    assert "partial" in result.output
    pids = read_pids(tmp_path / "pids")
    assert len(pids) == 2
    assert await wait_gone(pids) == []


@pytest.mark.timeout(60)
async def test_cancellation_kills_the_group_at_once(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    task = asyncio.create_task(
        run_command(f"sleep 60 & echo $! > {pid_file}; wait", tmp_path, LIMITS)
    )
    while not pid_file.exists() or not pid_file.read_text().strip():
        await asyncio.sleep(0.02)
    pid = int(pid_file.read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The SIGKILL was sent before the cancellation finished: the process is already dead.
    assert await wait_gone([pid], limit_seconds=5) == []


@pytest.mark.timeout(120)
@pytest.mark.parametrize("delay", [0.0, 0.001, 0.005, 0.02, 0.1])
async def test_cancellation_at_any_moment_leaves_nothing(tmp_path: Path, delay: float) -> None:
    marker = f"cancel-test-{os.getpid()}-{delay}"
    task = asyncio.create_task(run_command("sleep 60 & sleep 60", tmp_path, LIMITS, marker=marker))
    await asyncio.sleep(delay)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    while processes_with_marker(marker) and loop.time() < deadline:
        await asyncio.sleep(0.05)
    assert processes_with_marker(marker) == []


@pytest.mark.slow
async def test_progress_reports_output_lines(tmp_path: Path) -> None:
    lines: list[str] = []

    async def report(line: str) -> None:
        lines.append(line)

    result = await run_command(
        "for i in 1 2 3; do echo step $i; sleep 0.6; done", tmp_path, LIMITS, on_progress=report
    )
    assert result.exit_code == 0
    assert lines
    assert all(line.startswith("step ") for line in lines)


@pytest.mark.timeout(120)
def test_200_megabytes_of_output_with_bounded_memory(tmp_path: Path) -> None:
    # A child interpreter measures its own peak memory while capturing 200 MB. VmHWM, not
    # ru_maxrss: Linux carries the parent's (pytest's) high-water mark across exec.
    script = (
        "import asyncio, re\n"
        "from pathlib import Path\n"
        "from lsp_server.shell.runner import RunLimits, run_command\n"
        "def peak_mb():\n"
        "    status = Path('/proc/self/status').read_text()\n"
        "    return int(re.search(r'VmHWM:\\s+(\\d+) kB', status).group(1)) // 1024\n"
        "r = asyncio.run(run_command('yes | head -c 200000000', Path('.'),"
        " RunLimits(timeout_seconds=100, capture_bytes=8 * 1024 * 1024)))\n"
        "print(r.exit_code, r.total_bytes, r.dropped_bytes, len(r.output),"
        " peak_mb())\n"
        "print(r.output[4 * 1024 * 1024 - 10 : 4 * 1024 * 1024 + 200])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    first, gap = done.stdout.split("\n", 1)
    exit_code, total, dropped, length, peak_mb = (int(v) for v in first.split())
    assert exit_code == 0
    assert total == 200_000_000
    assert dropped == 200_000_000 - 8 * 1024 * 1024
    assert length < 9 * 1024 * 1024
    assert f"{dropped} bytes of output dropped" in gap
    # Interpreter + libraries + two copies of the kept 8 MB: far below 200 MB.
    assert peak_mb < 120
