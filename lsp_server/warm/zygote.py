"""The warm process: imports the runtime once, then forks a child for each start handed to it.

One per user and code stamp (a lock held for its life), started by the first `--warm` front
that found none. Its imports run in a thread at nice +10 (the front that started it is
importing the same modules and comes first); the main thread, at the priority it was started
with, serves and forks, so a child starts at that priority (and takes its front's, if that
is nicer). Before serving, the garbage collector's generations are frozen: a child's first
collections do not walk (and so copy) the imported heap. It ends after IDLE_SECONDS without
a start, when its socket is gone, or on SIGTERM (removing its socket).
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import importlib
import json
import logging
import os
import resource
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

from lsp_server.warm import confined_alike
from lsp_server.warm.handover import GO
from lsp_server.warm.place import Place, code_stamp, place

log = logging.getLogger("toolhost.warm")

IDLE_SECONDS = 15 * 60
# What a start imports before its first call, and what it imports lazily on the way
# (the SDK's stdio transport); a module that fails to import is imported by the child then.
PRELOAD = (
    "lsp_server.cli",
    "lsp_server.cli.mcp",
    "lsp_server.cli.serve",
    "lsp_server.mcp.stdio.front",
    "lsp_server.mcp.calls.tool_calls",
    "lsp_server.mcp.calls.router",
    "lsp_server.mcp.calls.local",
    "lsp_server.tools.registry",
    "lsp_server.compose",
    "lsp_server.mcp.stdio.stdio_streams",
    "anyio._backends._asyncio",
    "anyio.streams.stapled",
    "concurrent.futures.thread",
    "lsp_server.server.transport",
    "lsp_server.server.server",
    "lsp_server.server.watch",
    "lsp_server.server.editor",
    "lsp_server.attach.listener",
    "pygls.progress",
    "orjson",
)
# Made once before serving, taken by every child (module:function, run after PRELOAD).
PREPARE = ("lsp_server.server.typed_protocol:make_ready",)
GO_SECONDS = 60.0
MESSAGE_LIMIT = 4 * 1024 * 1024
PEER_CREDENTIALS = struct.Struct("3i")


Command = Callable[[list[str]], int]
"""Runs `toolhost <argv>` in this process (`lsp_server.cli.run_here`, given by the entry
point: the warm process sits below the command line)."""


def main(stamp: str, command: Command) -> int:
    """Serve until idle; in a forked child, run the command it was handed and return its
    exit status (outside every frame of the serving loop, so the child ends as a cold
    start does: the interpreter's shutdown, atexit)."""
    logging.basicConfig(
        level=os.environ.get("TOOLHOST_LOG", "WARNING").upper(),
        format=f"%(asctime)s warm {os.getpid()} %(levelname)s: %(message)s",
    )
    where = place(stamp)
    lock = os.open(where.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return 0  # another one serves this stamp
    os.ftruncate(lock, 0)
    os.write(lock, f"{os.getpid()}\n".encode())  # who serves: `kill $(cat warm-*.lock)`
    if code_stamp() != stamp:
        return 0  # the code changed since the front looked: its next start makes a new one
    _preload()
    if threading.active_count() > 1:  # a fork keeps only the forking thread
        log.warning("threads left after the imports: %s", threading.enumerate())
    gc.collect()
    gc.freeze()
    serving = os.getpid()
    signal.signal(signal.SIGTERM, _end)  # `kill`: the socket is removed on the way out
    listener = _listen(where)
    bound = where.socket.stat().st_ino
    log.info("serving %s", where.socket)
    try:
        child = _serve(listener, where, lock)
    finally:
        if os.getpid() == serving:
            _unlink_if_ours(where, bound)
            listener.close()
    return 0 if child is None else child.run(command)


def _end(_signum: int, _frame: object) -> None:
    raise SystemExit(0)


def _preload() -> None:
    def imports() -> None:
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
        for name in PRELOAD:
            try:
                importlib.import_module(name)
            except Exception:
                log.warning("preloading %s failed", name, exc_info=True)
        for name in PREPARE:
            module, _, function = name.partition(":")
            try:
                getattr(importlib.import_module(module), function)()
            except Exception:
                log.warning("preparing %s failed", name, exc_info=True)

    thread = threading.Thread(target=imports, name="toolhost-warm-imports")
    thread.start()
    thread.join()


def _listen(where: Place) -> socket.socket:
    """Bound 0600 (the folder is 0700 and ours); a socket left by a dead one is replaced
    (its lock is ours now, so nobody serves it)."""
    with contextlib.suppress(FileNotFoundError):
        where.socket.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
    umask = os.umask(0o177)
    try:
        listener.bind(os.fspath(where.socket))
    finally:
        os.umask(umask)
    listener.listen(16)
    return listener


def _unlink_if_ours(where: Place, bound: int) -> None:
    """The socket file, unless another warm process has bound its own there since."""
    with contextlib.suppress(OSError):
        if where.socket.stat().st_ino == bound:
            where.socket.unlink()


def _serve(listener: socket.socket, where: Place, lock: int) -> Child | None:
    """None once idle; a Child in the process forked for a start."""
    idle_seconds = float(os.environ.get("TOOLHOST_WARM_IDLE_SECONDS", IDLE_SECONDS))
    listener.settimeout(min(idle_seconds, 30.0))
    last_start = time.monotonic()
    while time.monotonic() - last_start < idle_seconds and where.socket.exists():
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            continue
        last_start = time.monotonic()
        child = _take(connection, listener, lock)
        if child is not None:
            return child
        connection.close()
    return None


def _take(connection: socket.socket, listener: socket.socket, lock: int) -> Child | None:
    """One start: checked, then forked twice (the child is nobody's to wait for)."""
    connection.settimeout(5.0)
    fds: list[int] = []
    try:
        pid, uid, _gid = PEER_CREDENTIALS.unpack(
            connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, PEER_CREDENTIALS.size)
        )
        payload, fds, _flags, _address = socket.recv_fds(connection, MESSAGE_LIMIT, 3)
        if not payload and not fds:
            return None  # closed without a word: somebody checking that we listen
        refusal = _refusal(uid, pid, payload, fds)
        if refusal:
            log.info("refused pid %d: %s", pid, refusal)
            with contextlib.suppress(OSError):  # it may have given up already
                connection.sendall(json.dumps({"refused": refusal}).encode())
            return None
        request = json.loads(payload.decode("utf-8", "surrogateescape"))
        first = os.fork()
        if first == 0:
            grandchild = False
            try:
                os.setsid()
                grandchild = os.fork() == 0
                if grandchild:
                    try:
                        return _become(request, fds, connection, listener, lock)
                    except BaseException:  # never a second warm process
                        log.exception("a child could not take its start")
                        os._exit(1)
            finally:
                if not grandchild:
                    os._exit(0)
        os.waitpid(first, 0)
    except (OSError, ValueError):
        log.warning("a start could not be taken", exc_info=True)
    finally:
        for fd in fds:
            os.close(fd)
    return None


def _refusal(uid: int, pid: int, payload: bytes, fds: list[int]) -> str:
    if uid != os.getuid():
        return "another user"
    if len(fds) != 3:
        return f"{len(fds)} descriptors sent, not stdin, stdout and stderr"
    differences = confined_alike.differences(pid)
    if differences:
        return "confined otherwise than the warm process: " + ", ".join(differences)
    try:
        request = json.loads(payload.decode("utf-8", "surrogateescape"))
    except ValueError:
        return "not a start request"
    if not (
        isinstance(request, dict)
        and isinstance(request.get("argv"), list)
        and isinstance(request.get("env"), dict)
        and isinstance(request.get("cwd"), str)
        and isinstance(request.get("umask"), int)
    ):
        return "not a start request"
    return ""


def _become(
    request: dict[str, Any],
    fds: list[int],
    connection: socket.socket,
    listener: socket.socket,
    lock: int,
) -> Child:
    """The child: the front's descriptors, folder, environment, umask and limits. Its pid
    goes to the front once it is ready to serve, and it serves once the front says go;
    anything wrong before that, and the front starts cold."""
    listener.close()
    os.close(lock)  # the lock is the warm process's: a child must not keep it
    try:
        _take_on(request, fds)
    except OSError as exc:
        with contextlib.suppress(OSError):
            refusal = {"refused": f"the child could not start: {exc}"}
            connection.sendall(json.dumps(refusal).encode())
        os._exit(1)
    connection.sendall(json.dumps({"pid": os.getpid()}).encode())
    # Nothing is read from or written to the front's descriptors before it says "go": a
    # front that gave up waiting (and serves its pipes itself) closes instead.
    connection.settimeout(GO_SECONDS)
    try:
        go = connection.recv(16)
    except OSError:
        go = b""
    if go != GO:
        os._exit(1)
    return Child([str(arg) for arg in request["argv"]], connection)


class Child:
    """A start taken on: the command, and the front waiting for its end."""

    def __init__(self, argv: list[str], front: socket.socket) -> None:
        self.argv = argv
        self.front = front
        self.ending = threading.Event()

    def run(self, command: Command) -> int:
        threading.Thread(target=self._watch_front, name="toolhost-warm-front", daemon=True).start()
        status = 1
        try:
            status = command(self.argv)
        except SystemExit as exit_:
            status = exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
        self.ending.set()
        with contextlib.suppress(OSError):
            self.front.sendall(json.dumps({"exit": status}).encode())
        # The front exits when the connection closes, with this process.
        return status

    def _watch_front(self) -> None:
        """The front went away (killed) while the command runs: end as it would have."""
        with contextlib.suppress(OSError):
            self.front.settimeout(None)
            while self.front.recv(4096):
                pass
        if not self.ending.is_set():
            os.kill(os.getpid(), signal.SIGTERM)


def _take_on(request: dict[str, Any], fds: list[int]) -> None:
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    fds.clear()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in request["env"].items()})
    os.umask(request["umask"])
    for name, (soft, hard) in request.get("limits", {}).items():
        kind = getattr(resource, str(name), None)
        if isinstance(kind, int):
            with contextlib.suppress(OSError, ValueError):
                resource.setrlimit(kind, (soft, hard))
    nice = request.get("nice")
    if isinstance(nice, int) and nice > os.getpriority(os.PRIO_PROCESS, 0):
        os.setpriority(os.PRIO_PROCESS, 0, nice)  # lower only: raising needs privilege
    tempfile.tempdir = None  # worked out again from this environment
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    logging.getLogger().handlers.clear()  # the command configures its own
    sys.argv = ["toolhost", *map(str, request["argv"])]
