"""The front of a warm start: hand this command to the warm process, or say it cannot.

The standard library only, and nothing on the way to the answer but a stat walk (~2 ms),
one connect and one message. Runs before `toolhost`'s own argument parsing."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import socket
import sys
from pathlib import Path
from typing import Any

from lsp_server.home.private_folder import UnsafeFolder
from lsp_server.warm.place import Place, code_stamp, place

FLAG = "--warm"
GO = b"go"
COMMANDS = ("mcp", "serve")
# Connecting, and the child's pid: a warm process answers in milliseconds; one that does
# not within this is passed by (its child, told nothing, ends without serving).
CONNECT_TIMEOUT = 10.0
RELAYED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
# The exit status of a child that ended without saying one (killed): what a shell reports
# for a signal it cannot name.
UNKNOWN_END = 1


def requested(argv: list[str]) -> bool:
    return bool(argv) and argv[0] in COMMANDS and FLAG in argv[1:]


def hand_over(argv: list[str]) -> int | None:
    """Run `toolhost <argv>` in a child of the warm process and return its exit status;
    None when no warm process took it (this process runs the command itself then). The
    first time, the warm process is started for the starts that follow."""
    try:
        stamp = code_stamp()
        where = place(stamp)
    except (OSError, UnsafeFolder) as exc:
        _note(f"no private folder for the warm process ({exc}): starting cold")
        return None
    try:
        connection = _connect(where)
    except OSError:
        _start_warm_process(stamp, where)
        return None
    with connection:
        pid = _send(connection, argv)
        if pid is None:
            return None
        return _relay(connection, pid)


def _connect(where: Place) -> socket.socket:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
    try:
        connection.settimeout(CONNECT_TIMEOUT)
        connection.connect(os.fspath(where.socket))
    except OSError:
        connection.close()
        raise
    return connection


def request(argv: list[str]) -> dict[str, Any]:
    """Everything the child needs to be this process, but its descriptors (sent beside)."""
    umask = os.umask(0o077)
    os.umask(umask)
    limits = {}
    for name in dir(resource):
        if name.startswith("RLIMIT_"):
            with contextlib.suppress(OSError, ValueError):
                limits[name] = list(resource.getrlimit(getattr(resource, name)))
    return {
        "argv": argv,
        "env": {os.fsdecode(k): os.fsdecode(v) for k, v in os.environb.items()},
        "cwd": str(Path.cwd()),
        "umask": umask,
        "limits": limits,
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
    }


def _send(connection: socket.socket, argv: list[str]) -> int | None:
    """The child's pid once it has taken stdin, stdout and stderr; None if it did not."""
    try:
        payload = json.dumps(request(argv), ensure_ascii=False).encode("utf-8", "surrogateescape")
        socket.send_fds(connection, [payload], [0, 1, 2])
        reply = json.loads(connection.recv(65536) or b"null")
    except (OSError, ValueError) as exc:
        _note(f"the warm process did not take this start ({exc}): starting cold")
        return None
    if not isinstance(reply, dict) or not isinstance(reply.get("pid"), int):
        refused = reply.get("refused") if isinstance(reply, dict) else None
        _note(f"the warm process refused this start ({refused or reply!r}): starting cold")
        return None
    pid: int = reply["pid"]
    try:
        connection.sendall(GO)  # from here the child serves, and this process only waits
    except OSError as exc:
        _note(f"the warm process's child went away ({exc}): starting cold")
        return None
    return pid


def _relay(connection: socket.socket, pid: int) -> int:
    """Wait for the child's end, passing it the signals this process gets; stdin and stdout
    are the child's alone from here (an agent sees the end of output when it ends)."""
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)
    relayed: list[int] = []

    def relay(signum: int, _frame: object) -> None:
        relayed.append(signum)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)

    for signum in RELAYED_SIGNALS:
        signal.signal(signum, relay)
    connection.settimeout(None)
    status: int | None = None
    while True:
        try:
            message = connection.recv(65536)
        except InterruptedError:
            continue
        except OSError:
            break
        if not message:
            break  # the child has ended: its last descriptor is closed
        with contextlib.suppress(ValueError):
            said = json.loads(message)
            if isinstance(said, dict) and isinstance(said.get("exit"), int):
                status = said["exit"]
    if status is None and relayed:
        signal.signal(relayed[-1], signal.SIG_DFL)
        os.kill(os.getpid(), relayed[-1])  # ended by the signal we passed on: end alike
    return UNKNOWN_END if status is None else status


# Not `-m` in the working folder (a workspace's own `lsp_server/` would be found first):
# from /, with this process's import path.
WARM_PROCESS = (
    "import sys, json; sys.path[:] = json.loads(sys.argv[2]); "
    "from lsp_server.warm import zygote; from lsp_server.cli import run_here; "
    "sys.exit(zygote.main(sys.argv[1], run_here))"
)


def _start_warm_process(stamp: str, where: Place) -> None:
    """Started in its own session with this environment and import path; it imports at a
    low priority, so this start, which goes on cold, keeps the CPU it needs."""
    import subprocess

    try:
        log = os.open(where.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    except OSError:
        log = subprocess.DEVNULL
    try:
        subprocess.Popen(
            [sys.executable, "-c", WARM_PROCESS, stamp, json.dumps(sys.path)],
            cwd="/",
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        _note(f"the warm process could not be started ({exc})")
    finally:
        if log != subprocess.DEVNULL:
            os.close(log)


def _note(text: str) -> None:
    if os.environ.get("TOOLHOST_LOG", "").upper() in ("DEBUG", "INFO"):
        print(f"toolhost: {text}", file=sys.stderr)
