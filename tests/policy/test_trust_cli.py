"""`toolhost trust` on a terminal (a pseudo-terminal here) and without one, `toolhost status`,
and the approval rules shared with toolhost/trustConfig (config/approval.py)."""

from __future__ import annotations

import hashlib
import os
import select
import subprocess
import time
from pathlib import Path

import pytest

from lsp_server.cli.trust import visible
from lsp_server.config.approval import approve_config
from lsp_server.config.trust import TrustStore
from lsp_server.config.workspace_file import read_workspace_file
from tests.mcp.clients import toolhost_command

CONFIG = '[policy]\nmode = "bypass"\n'


class Terminal:
    """`toolhost ARGS` with a pseudo-terminal as its stdin, stdout and stderr."""

    def __init__(self, *args: str, cwd: Path) -> None:
        self.master, slave = os.openpty()
        self.process = subprocess.Popen(
            [*toolhost_command(), *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            close_fds=True,
        )
        os.close(slave)
        self.output = ""

    def wait_for(self, text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout  # a bound for a busy machine, not a measure
        while text not in self.output:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"never saw {text!r} in {self.output!r}"
            ready, _, _ = select.select([self.master], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:  # the other side closed: the program ended
                    chunk = b""
                if not chunk:
                    assert text in self.output, f"ended without {text!r}: {self.output!r}"
                self.output += chunk.decode(errors="replace")
        return self.output

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def finish(self) -> int:
        code = self.process.wait(timeout=60)
        os.close(self.master)
        return code


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / ".git").mkdir()
    (folder / ".toolhost.toml").write_text(CONFIG)
    return folder


def state() -> TrustStore:
    return TrustStore(Path(os.environ["TOOLHOST_STATE_DIR"]))


def test_asks_on_a_terminal_again_after_a_typo(root: Path) -> None:
    terminal = Terminal("trust", cwd=root)
    shown = terminal.wait_for("Trust this exact content? [y/N] ")
    assert "policy.mode = 'bypass'" in shown  # what approving it lets apply
    terminal.type("yse")
    terminal.wait_for("Please answer y")
    terminal.type("y")
    terminal.wait_for("A running toolhost applies it at its next start")
    assert terminal.finish() == 0
    found = read_workspace_file(root, state(), [], [])
    assert found is not None and found.trusted


def test_no_is_the_default(root: Path) -> None:
    terminal = Terminal("trust", str(root / ".toolhost.toml"), cwd=root.parent)
    terminal.wait_for("[y/N] ")
    terminal.type("")
    terminal.wait_for("Not trusted")
    assert terminal.finish() == 1
    found = read_workspace_file(root, state(), [], [])
    assert found is not None and not found.trusted


def test_without_a_terminal_it_names_the_command_and_records_nothing(root: Path) -> None:
    done = subprocess.run(
        [*toolhost_command(), "trust", str(root)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    sha = hashlib.sha256(CONFIG.encode()).hexdigest()
    assert done.returncode == 2
    assert f"--sha256 {sha}" in done.stderr
    assert state().approved_config(root, root / ".toolhost.toml") is None


def test_status_names_the_file_and_how_to_approve_it(root: Path) -> None:
    done = subprocess.run(
        [*toolhost_command(), "status", "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "NOT TRUSTED (new file, not yet approved)" in done.stdout, done.stdout + done.stderr
    assert f"toolhost trust {root / '.toolhost.toml'}" in done.stdout
    assert "policy.mode" in done.stdout and "from default" in done.stdout
    doctor = subprocess.run(
        [*toolhost_command(), "doctor", "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "NOT TRUSTED (new file, not yet approved)" in doctor.stdout, doctor.stderr
    assert "ignored until you approve it: policy.mode = 'bypass'" in doctor.stdout


def test_approval_needs_the_current_content_of_a_roots_config(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    path = root / ".toolhost.toml"
    path.write_text(CONFIG)
    trust = TrustStore(tmp_path / "state")
    sha = hashlib.sha256(CONFIG.encode()).hexdigest()
    assert not approve_config(path, "nope", [root], trust).trusted
    assert not approve_config(root / "sub" / ".toolhost.toml", sha, [root], trust).trusted
    assert not approve_config(root / "other.toml", sha, [root], trust).trusted
    odd = approve_config(root / "a\x00b" / ".toolhost.toml", sha, [root], trust)
    assert not odd.trusted and "not a usable path" in odd.message
    long = approve_config(root / ("x" * 5000) / ".toolhost.toml", sha, [root], trust)
    assert not long.trusted
    assert approve_config(path, sha.upper(), [root], trust).trusted
    assert trust.approved_config(root, path) == sha
    # The same folder through a link is the same workspace.
    link = tmp_path / "link"
    link.symlink_to(root)
    assert trust.approved_config(link, link / ".toolhost.toml") == sha


def test_a_fifo_in_place_of_the_config_does_not_hang_the_server(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    os.mkfifo(root / ".toolhost.toml")
    problems: list[str] = []
    found = read_workspace_file(root, TrustStore(tmp_path / "state"), problems, [])
    assert found is not None and not found.trusted
    assert "not a regular file" in problems[0]
    approval = approve_config(root / ".toolhost.toml", "0" * 64, [root], TrustStore(tmp_path))
    assert not approval.trusted and "not a regular file" in approval.message


def test_a_terminal_sequence_in_the_file_is_shown_not_obeyed(root: Path) -> None:
    (root / ".toolhost.toml").write_text('[policy]\nmode = "bypass"\n\x1b[1A\x1b[2K# ok\n')
    done = subprocess.run(
        [*toolhost_command(), "trust", str(root)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert "\\x1b[1A\\x1b[2K# ok" in done.stdout and "\x1b" not in done.stdout


def test_visible_shows_control_characters() -> None:
    assert visible("a\tb\n\x1b[31mred\x07\u202e") == "a\tb\n\\x1b[31mred\\x07\\u202e"


@pytest.mark.parametrize(
    "command",
    [
        "toolhost trust --sha256 " + "a" * 64,
        ".venv/bin/toolhost trust sub",
        "cd sub && python3 -m lsp_server trust",
        "env -u X toolhost trust",
    ],
)
def test_the_agent_running_toolhost_trust_always_asks(tmp_path: Path, command: str) -> None:
    """Outside the sandbox (which cannot write the state folder), even in bypass mode with
    Bash allowed: the approval is the user's, so the command asks."""
    from tests.policy.test_protected_writes import bash, engine

    root = tmp_path.resolve()
    decision = engine(root, "bypass", ("Bash",)).decide(bash(command, root))
    assert decision.action == "ask", decision
    assert "toolhost trust" in decision.reason
