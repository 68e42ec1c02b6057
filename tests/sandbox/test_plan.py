"""The pure parts: the plan for one command, the bwrap command line, full-screen programs."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_server.sandbox import plan_command, stricter_mode
from lsp_server.sandbox.bubblewrap import BubblewrapLayout, bubblewrap_argv
from lsp_server.sandbox.platforms import find_backend
from lsp_server.shell.fullscreen import needs_terminal


def test_default_plan_is_contained_and_needs_no_approval() -> None:
    plan = plan_command("workspace-write", None)
    assert plan.sandboxed and not plan.network and plan.contained
    assert plan.escalation is None
    assert "no network" in plan.describe()


def test_network_and_outside_requests_escalate() -> None:
    network = plan_command("workspace-write", None, "network")
    assert network.sandboxed and network.network and not network.contained
    assert network.escalation == "with network access"
    outside = plan_command("workspace-write", None, "off")
    assert not outside.sandboxed and not outside.contained
    assert outside.escalation == "outside the sandbox"


def test_network_from_the_users_configuration_stays_contained() -> None:
    plan = plan_command("workspace-write", None, "default", network_configured=True)
    assert plan.network and plan.contained
    assert "network allowed by your configuration" in plan.describe()


def test_unavailable_sandbox_fails_closed() -> None:
    plan = plan_command("workspace-write", "bubblewrap (bwrap) is not on PATH")
    assert not plan.sandboxed and not plan.contained
    assert "bubblewrap (bwrap) is not on PATH" in plan.describe()
    assert "asks first" in plan.describe()


def test_off_is_said_to_be_configured() -> None:
    plan = plan_command("off", "irrelevant")
    assert not plan.sandboxed and plan.unavailable is None
    assert plan.describe().startswith("sandbox off (configured)")


@pytest.mark.parametrize(
    ("a", "b", "strictest"),
    [
        ("off", "workspace-write", "workspace-write"),
        ("read-only", "workspace-write", "read-only"),
        ("workspace-write", "off", "workspace-write"),
    ],
)
def test_stricter_mode(a: str, b: str, strictest: str) -> None:
    assert stricter_mode(a, b) == strictest  # type: ignore[arg-type]


def _pairs(argv: list[str], flag: str) -> list[str]:
    return [argv[i + 1] for i, word in enumerate(argv) if word == flag]


def test_argv_layout_order_and_namespaces(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    state = tmp_path / "state"
    layout = BubblewrapLayout("bwrap", (root,), writable=True)
    argv = bubblewrap_argv(layout, ["bash", "-c", "x"], root, state)
    assert argv[:3] == ["bwrap", "--ro-bind", "/"]
    # The workspace is bound after the private /tmp, the protected .git after the workspace.
    assert argv.index("--tmpfs") < argv.index("--bind") < argv.index("--ro-bind-try")
    assert _pairs(argv, "--bind") == [str(root), str(state)]
    assert _pairs(argv, "--ro-bind-try") == [str(root / ".git")]  # no .toolhost.toml here
    for flag in ("--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session"):
        assert flag in argv
    assert argv[-4:] == ["--", "bash", "-c", "x"]


def test_argv_with_network_and_outside(tmp_path: Path) -> None:
    layout = BubblewrapLayout("bwrap", (tmp_path,), writable=True, network=True)
    assert "--unshare-net" not in bubblewrap_argv(layout, ["true"], tmp_path, tmp_path)
    outside = BubblewrapLayout("bwrap", (tmp_path,), writable=True, confined=False)
    argv = bubblewrap_argv(outside, ["true"], tmp_path, tmp_path)
    assert argv[1:4] == ["--bind", "/", "/"]
    assert "--unshare-net" not in argv and "--tmpfs" not in argv
    assert "--unshare-pid" in argv and "--die-with-parent" in argv


def test_read_only_layout_binds_roots_read_only(tmp_path: Path) -> None:
    layout = BubblewrapLayout("bwrap", (tmp_path,), writable=False)
    argv = bubblewrap_argv(layout, ["true"], tmp_path, tmp_path / "state")
    assert str(tmp_path) in _pairs(argv, "--ro-bind")
    assert _pairs(argv, "--bind") == [str(tmp_path / "state")]


def test_backend_missing_from_path_and_other_platforms(tmp_path: Path) -> None:
    missing = find_backend(str(tmp_path))
    assert missing.executable is None
    assert missing.problem is not None and "not on PATH" in missing.problem
    mac = find_backend(None, platform="darwin")
    assert mac.problem == "no sandbox backend on macOS (Linux only)"


@pytest.mark.parametrize(
    "command",
    ["vi file", "vim x", "/usr/bin/vi x", "top", "timeout 5 top", "env TERM=xterm nano f",
     "ls && htop", "sudo -u me vim f", "FOO=1 emacs f", "xargs -n1 vim", "watch ls"],
)  # fmt: skip
def test_full_screen_programs_are_refused_with_the_reason(command: str) -> None:
    reason = needs_terminal(command)
    assert reason is not None
    assert "full-screen program: it needs a terminal" in reason
    assert "Instead:" in reason


@pytest.mark.parametrize(
    "command",
    ["top -b -n 1", "top -bn1", "vim -es -c wq f", "nvim --headless +q", "emacs --batch -l x",
     "echo vi", "cat top.txt", "git log | less", "vim --version"],
)  # fmt: skip
def test_batch_uses_run(command: str) -> None:
    assert needs_terminal(command) is None
