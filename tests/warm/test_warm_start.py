"""The warm start (lsp_server/warm): `toolhost mcp --warm` and `toolhost serve --warm` hand
their start to a warm process, which forks a child that serves the client's own pipes.

Each test has its own runtime folder (tests/conftest.py), so its own warm process; the
`warm` fixture ends whatever warm process a test started. Which process serves a session
is read from /proc: the holder of the client's pipe."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsp_server.warm import place
from tests.helpers import lsp_call, lsp_session
from tests.mcp.clients import RawMcp, mcp_session, structured, text_of, toolhost_command
from tests.mcp.test_elicitation import answering

# Generous bounds for a loaded machine: never timing assertions.
WAIT_SECONDS = 60.0


class WarmProcesses:
    """The warm processes of this test's runtime folder."""

    def __init__(self, runtime_folder: str | None = None) -> None:
        self.folder = Path(runtime_folder or os.environ["XDG_RUNTIME_DIR"]) / "toolhost"

    def pids(self) -> list[int]:
        """The pid in each lock file whose process is alive."""
        alive = []
        for lock in self.folder.glob("warm-*.lock"):
            text = lock.read_text().strip()
            if text.isdigit() and Path(f"/proc/{text}").exists():
                alive.append(int(text))
        return alive

    def sockets(self) -> list[Path]:
        """Where the warm processes of this folder listen (by the stamps of their locks)."""
        return [
            place.place(lock.stem.removeprefix("warm-"), self.folder).socket
            for lock in self.folder.glob("warm-*.lock")
        ]

    def serving(self) -> int:
        """The pid of the warm process once it takes connections (waits for it; a socket
        file alone may be a dead one's)."""
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            pids = self.pids()
            if pids and any(_answers(path) for path in self.sockets()):
                return pids[0]
            time.sleep(0.05)
        raise AssertionError(f"no warm process serves in {self.folder}")

    def start(self, root: Path, command: str = "mcp") -> int:
        """A `--warm` start with nothing to serve (no warm process yet: it runs cold, and
        starts one), then the warm process's pid."""
        subprocess.run(
            [*toolhost_command(), command, "--warm", *_root_args(command, root)],
            input=b"",  # the end of input at once (a pipe: the null device cannot be polled)
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
            timeout=WAIT_SECONDS,
        )
        return self.serving()

    def end(self) -> None:
        for pid in self.pids():
            os.kill(pid, signal.SIGTERM)
            _wait_until(lambda pid=pid: not _alive(pid), f"warm process {pid} ended")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / "hello.txt").write_text("hello from the fixture\n", encoding="utf-8")
    (root / "notes.md").write_text("# Notes\n\nline three\n", encoding="utf-8")
    return root


@pytest.fixture
def warm() -> Iterator[WarmProcesses]:
    processes = WarmProcesses()
    try:
        yield processes
    finally:
        processes.end()


def _root_args(command: str, root: Path) -> list[str]:
    return ["--root", str(root), "--attach", "never"] if command == "mcp" else []


def _answers(path: Path) -> bool:
    """Whether somebody accepts on the socket (the warm process refuses a connection that
    sends nothing, and goes on)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_until(condition: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not so after {WAIT_SECONDS} s: {what}")
        time.sleep(0.05)


def pipe_holders(fd: int) -> set[int]:
    """The processes (other than this one) with a descriptor on the pipe behind `fd`."""
    wanted = f"pipe:[{os.fstat(fd).st_ino}]"
    holders = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        if wanted in links_of(int(entry.name)):
            holders.add(int(entry.name))
    return holders


def links_of(pid: int) -> list[str]:
    """What the descriptors of `pid` name (one closed between the listing and its readlink
    is left out; none if the process has ended)."""
    try:
        entries = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return []
    links = []
    for entry in entries:
        try:
            links.append(os.readlink(entry))
        except OSError:
            continue
    return links


def parent_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("PPid:"):
            return int(line.split()[1])
    raise AssertionError(f"no PPid for {pid}")


async def spawn(
    root: Path, *extra: str, env: dict[str, str] | None = None, preexec: Any = None
) -> RawMcp:
    process = await asyncio.create_subprocess_exec(
        *toolhost_command(),
        "mcp",
        "--warm",
        *_root_args("mcp", root),
        *extra,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
        cwd=root,
        preexec_fn=preexec,
    )
    return RawMcp(process)


async def opened(client: RawMcp) -> RawMcp:
    answer = await client.request(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "warm-test", "version": "0"},
        },
    )
    assert answer["result"]["serverInfo"]["name"], answer
    await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return client


async def call(client: RawMcp, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    answer = await client.request("tools/call", {"name": name, "arguments": arguments})
    result: dict[str, Any] = answer["result"]
    return result


async def reads_hello(client: RawMcp) -> None:
    result = await call(client, "read_file", {"path": "hello.txt"})
    assert "hello from the fixture" in result["content"][0]["text"], result


async def runs_cold(root: Path, preexec: Any = None) -> None:
    """A `--warm` start that no warm process takes: it answers, serving its own pipes."""
    client = await opened(await spawn(root, preexec=preexec))
    try:
        await reads_hello(client)
        assert served_by(client) == client.process.pid
    finally:
        await client.close()


def served_by(client: RawMcp) -> int:
    """The one process that serves the client's pipe (the front, or a warm child)."""
    assert client.process.stdin is not None
    transport = client.process.stdin.get_extra_info("pipe")
    holders = pipe_holders(transport.fileno())
    assert len(holders) == 1, holders
    return holders.pop()


@pytest.mark.slow
async def test_a_warm_start_is_served_by_a_child_of_the_warm_process(
    ws: Path, warm: WarmProcesses
) -> None:
    """The first `--warm` start runs cold and leaves a warm process; the next one's pipes are
    served by a process forked from it, not by the front, and its calls answer as a cold
    start's do."""
    warm_pid = warm.start(ws)
    client = await opened(await spawn(ws))
    try:
        await reads_hello(client)
        server = served_by(client)
        assert server not in (client.process.pid, warm_pid)
        # Forked twice from the warm process: nobody's child but init's (or a subreaper's).
        assert parent_of(server) not in (client.process.pid, warm_pid)
        front_links = [
            os.readlink(link) for link in Path(f"/proc/{client.process.pid}/fd").iterdir()
        ]
        assert not [link for link in front_links if link.startswith("pipe:")], front_links
    finally:
        await client.close()
    _wait_until(lambda: not _alive(server), "the child ended with its front")
    assert warm.pids() == [warm_pid]  # the warm process stays for the next start


async def test_without_warm_the_front_serves_its_own_pipes(ws: Path) -> None:
    """The contrast the test above relies on: a plain start serves its pipes itself."""
    process = await asyncio.create_subprocess_exec(
        *toolhost_command(),
        "mcp",
        *_root_args("mcp", ws),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    client = await opened(RawMcp(process))
    try:
        assert served_by(client) == process.pid
    finally:
        await client.close()


@pytest.mark.slow
async def test_the_sdk_client_edits_through_a_warm_start(ws: Path, warm: WarmProcesses) -> None:
    """The official SDK's client: initialize, read, edit approved by the client's form (the
    elicitation goes out through the child's pipes); the edit lands, the refusal of an
    unobserved edit is the same structured result."""
    warm.start(ws)
    asked: list[Any] = []
    approve = answering("accept", {"decision": "allow_once"}, asked)
    async with mcp_session(
        ws, "--warm", "--attach", "never", elicitation_callback=approve
    ) as session:
        refused = await session.call_tool(
            "edit_file", {"path": "notes.md", "old_string": "three", "new_string": "3"}
        )
        read = await session.call_tool("read_file", {"path": "notes.md"})
        edit = await session.call_tool(
            "edit_file", {"path": "notes.md", "old_string": "three", "new_string": "3"}
        )
    assert structured(refused)["code"] == "FS_NOT_OBSERVED"
    assert "line three" in text_of(read)
    assert edit.is_error is False, text_of(edit)
    assert len(asked) == 1 and "Edit notes.md" in asked[0].message
    assert (ws / "notes.md").read_text() == "# Notes\n\nline 3\n"
    assert edit.meta is not None and edit.meta["toolhost"]["runtime"] == "local"


@pytest.mark.slow
async def test_the_child_takes_the_fronts_environment_folder_and_umask(
    ws: Path, tmp_path: Path, warm: WarmProcesses
) -> None:
    """Two starts from one warm process, each with its own state folder (where its audit
    log goes), umask (the mode of a file it creates) and nice value; the user's config
    (bypass) read from the front's XDG_CONFIG_HOME."""
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "toolhost"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text('[policy]\nmode = "bypass"\n', encoding="utf-8")
    warm.start(ws)
    outcomes = []
    niceness = []
    for name, umask in (("a", 0o022), ("b", 0o077)):
        state = tmp_path / f"state-{name}"
        client = await opened(
            await spawn(
                ws,
                env={"TOOLHOST_STATE_DIR": str(state)},
                preexec=lambda umask=umask, name=name: (os.umask(umask), os.nice(name == "b")),
            )
        )
        try:
            result = await call(client, "write_file", {"path": f"new-{name}.txt", "content": "x\n"})
            assert not result["isError"], result
            server = served_by(client)
            assert server != client.process.pid
            niceness.append(os.getpriority(os.PRIO_PROCESS, server))
        finally:
            await client.close()
        outcomes.append((state, (ws / f"new-{name}.txt").stat().st_mode & 0o777))
    (state_a, mode_a), (state_b, mode_b) = outcomes
    assert (mode_a, mode_b) == (0o644, 0o600)
    assert niceness[1] == niceness[0] + 1  # a front started nicer gets a nicer child
    for state, name in ((state_a, "new-a.txt"), (state_b, "new-b.txt")):
        audit = (state / "audit.jsonl").read_text()
        assert name in audit
    assert "new-b.txt" not in (state_a / "audit.jsonl").read_text()


@pytest.mark.slow
async def test_a_front_confined_otherwise_runs_cold(ws: Path, warm: WarmProcesses) -> None:
    """A front with no_new_privs set (as under Landlock, seccomp or bubblewrap) must not
    borrow the unconfined warm process: it is refused and serves its own pipes."""
    warm.start(ws)

    def no_new_privs() -> None:
        import ctypes

        assert ctypes.CDLL(None).prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS

    await runs_cold(ws, preexec=no_new_privs)


@pytest.mark.slow
async def test_the_front_passes_signals_on_and_ends_as_its_child_did(
    ws: Path, warm: WarmProcesses
) -> None:
    """SIGTERM to the front ends the child and then the front, by that signal; a front
    killed outright takes its child with it; end of input ends both with status 0."""
    warm.start(ws)
    client = await opened(await spawn(ws))
    child = served_by(client)
    client.process.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(client.process.wait(), WAIT_SECONDS) == -signal.SIGTERM
    _wait_until(lambda: not _alive(child), "the child ended on the relayed SIGTERM")

    client = await opened(await spawn(ws))
    child = served_by(client)
    client.process.kill()
    await client.process.wait()
    _wait_until(lambda: not _alive(child), "the child ended with its killed front")

    client = await opened(await spawn(ws))
    child = served_by(client)
    assert client.process.stdin is not None
    client.process.stdin.close()
    assert await asyncio.wait_for(client.process.wait(), WAIT_SECONDS) == 0
    _wait_until(lambda: not _alive(child), "the child ended at the end of its input")


@pytest.mark.slow
async def test_a_warm_process_killed_outright_is_replaced(ws: Path, warm: WarmProcesses) -> None:
    """Its socket is left behind: the next start finds nobody there, runs cold and starts
    another warm process, which takes the socket over."""
    first = warm.start(ws)
    os.kill(first, signal.SIGKILL)
    _wait_until(lambda: not _alive(first), "the warm process died")
    assert [path for path in warm.sockets() if path.exists()]  # left behind
    await runs_cold(ws)
    second = warm.serving()
    assert second != first
    client = await opened(await spawn(ws))
    try:
        assert served_by(client) != client.process.pid
    finally:
        await client.close()


@pytest.mark.slow
def test_an_idle_warm_process_ends_and_removes_its_socket(
    ws: Path, warm: WarmProcesses, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLHOST_WARM_IDLE_SECONDS", "1")
    pid = warm.start(ws)
    _wait_until(lambda: not _alive(pid), "the idle warm process ended")
    assert warm.sockets() and not [path for path in warm.sockets() if path.exists()]


async def test_a_runtime_folder_that_is_not_private_means_a_cold_start(
    ws: Path, warm: WarmProcesses
) -> None:
    """Somebody else's folder is never used: the start runs cold and no warm process is
    started there. (A folder of ours is made private again, so this needs another owner:
    root gives it away; CI runs as root.)"""
    if os.getuid() != 0:
        pytest.skip("giving the folder to another user needs root")
    warm.folder.mkdir(mode=0o777)
    warm.folder.chmod(0o777)
    os.chown(warm.folder, 65534, 65534)  # nobody's
    await runs_cold(ws)
    assert warm.pids() == []


@pytest.mark.slow
def test_a_warm_process_ended_by_sigterm_removes_its_socket(ws: Path, warm: WarmProcesses) -> None:
    pid = warm.start(ws)
    (socket_file,) = warm.sockets()
    os.kill(pid, signal.SIGTERM)
    _wait_until(lambda: not _alive(pid), "the warm process ended")
    assert not socket_file.exists()


@pytest.mark.slow
def test_doctor_names_the_warm_process(ws: Path, warm: WarmProcesses) -> None:
    def doctor() -> str:
        return subprocess.run(
            [*toolhost_command(), "doctor", "--root", str(ws)],
            capture_output=True,
            text=True,
            check=True,
            timeout=WAIT_SECONDS,
        ).stdout

    assert "Warm start: no warm process for this toolhost" in doctor()
    pid = warm.start(ws)
    assert f"Warm start: a warm process (pid {pid}) serves" in doctor()


@pytest.mark.slow
def test_the_socket_is_private(ws: Path, warm: WarmProcesses) -> None:
    warm.start(ws)
    (socket_file,) = warm.sockets()
    assert socket_file.stat().st_mode & 0o777 == 0o600
    assert socket_file.parent.stat().st_mode & 0o777 == 0o700
    assert warm.folder.stat().st_mode & 0o777 == 0o700


@pytest.mark.slow
async def test_serve_warm_answers_initialize_and_a_call(ws: Path, warm: WarmProcesses) -> None:
    """The LSP face: `toolhost serve --warm` through pygls' client, once a warm process
    serves (started by a `toolhost serve --warm` that got no input)."""
    warm.start(ws, "serve")
    async with lsp_session(ws, server_args=("--warm",)) as client:
        result = await lsp_call(client, "read_file", {"path": "hello.txt"})
        status = await client.protocol.send_request_async("toolhost/status", {})
    assert not result.get("isError"), result
    assert "hello from the fixture" in json.dumps(result)
    assert status["version"]


def test_a_changed_file_changes_the_stamp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An edited checkout or an upgrade never reaches an old warm process: the socket is
    named by a stamp of every file of the package."""
    package = tmp_path / "lsp_server"
    (package / "sub").mkdir(parents=True)
    (package / "sub" / "module.py").write_text("A = 1\n")
    monkeypatch.setattr(place, "PACKAGE", package)
    before = place.code_stamp()
    assert place.code_stamp() == before
    (package / "sub" / "module.py").write_text("A = 22\n")
    assert place.code_stamp() != before


def test_the_front_imports_the_standard_library_only() -> None:
    code = (
        "import sys\nfrom lsp_server.warm import handover\nprint(' '.join(sorted(sys.modules)))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert [m for m in loaded if m.startswith("lsp_server.")] == [
        "lsp_server.home",
        "lsp_server.home.dirs",
        "lsp_server.home.private_folder",
        "lsp_server.warm",
        "lsp_server.warm.handover",
        "lsp_server.warm.place",
    ]
    heavy = ("mcp", "pydantic", "attr", "attrs", "cattrs", "lsprotocol", "anyio", "pygls")
    assert [m for m in loaded if m.split(".")[0] in heavy] == []
