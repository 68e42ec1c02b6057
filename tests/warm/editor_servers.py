"""Whether the language server a real editor runs is a warm child (the editors' warm
settings: tests/vscode/test_vscode_warm.py, tests/nvim/test_warm_setting.py,
tests/emacs/test_warm_setting.py).

While its server runs, the editor reads /proc itself (the harnesses' `server_processes`,
the probe extension's "Server Channels") and reports what it saw in one shape:

    {"editorPid": N,
     "channels": ["pipe:[...]", "socket:[...]", ...],  # its pipes and sockets, from /proc
     "unixSockets": "...",                             # `ss -xnH`: each socket, its peer
     "processes": [{"pid", "ppid", "cmdline", "channels"}, ...]}  # its children and
                                                                  # every toolhost

A pipe's two ends have one name; the two ends of a socket pair (libuv's stdio: Neovim's,
VS Code's) each their own, which `ss` pairs. The test's own runtime folder (XDG_RUNTIME_DIR,
tests/conftest.py) holds the warm process, which the editor inherits; `warm_process`
starts it first and ends it with SIGTERM."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.conftest import require_program
from tests.warm.test_warm_start import WarmProcesses


@contextmanager
def warm_process(root: Path) -> Iterator[int]:
    """A warm process serving `toolhost serve --warm` starts (left by a first start that
    runs cold), its pid; ended when the block ends, whatever happened."""
    require_program("ss", "the editors pair the ends of their socket pairs with it (iproute2)")
    warm = WarmProcesses()
    try:
        yield warm.start(root, "serve")
    finally:
        warm.end()


def command_line(pid: int) -> str:
    """As the editors report it: the arguments joined by spaces."""
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()


def far_ends(seen: dict[str, Any]) -> set[str]:
    """The other ends of the editor's pipes and socket pairs, as /proc names them."""
    peers = {}
    for line in seen["unixSockets"].splitlines():
        tokens = line.split()  # netid state recv-q send-q address inode peer-address inode
        if len(tokens) >= 8:
            peers[f"socket:[{tokens[-3]}]"] = f"socket:[{tokens[-1]}]"
    return {peers.get(end, end) for end in seen["channels"]}


def assert_served_by_a_warm_child(seen: dict[str, Any], warm_pid: int) -> None:
    """The editor started `... serve --warm` (the front), which kept of the editor's channels
    at most its stderr; the one process holding the others (the editor's requests and
    answers) is a fork of the warm process (its command line), no child of the editor."""
    editor = seen["editorPid"]
    processes = seen["processes"]
    toolhost = [p for p in processes if "toolhost" in p["cmdline"] or "lsp_server" in p["cmdline"]]
    fronts = [p for p in toolhost if p["ppid"] == editor]
    assert len(fronts) == 1, processes
    [front] = fronts
    assert front["cmdline"].endswith(" serve --warm"), front
    ends = far_ends(seen)
    kept = ends & set(front["channels"])
    assert len(kept) <= 1, (front, ends)
    serving = [p for p in toolhost if p["pid"] != editor and (ends & set(p["channels"])) - kept]
    assert len(serving) == 1, (ends, processes)
    [server] = serving
    assert server["pid"] not in (front["pid"], warm_pid), (server, front)
    assert server["ppid"] != editor, server
    assert server["cmdline"] == command_line(warm_pid), server
    assert " serve" not in server["cmdline"], server
