"""Every fork and exit on the machine, as the kernel's process connector reports them, so
that a process can be traced to the command that started it even after it exited.

Listening takes CAP_NET_ADMIN (`ForkEvents.open` raises `ForksUnavailable` without it).
Only whole processes are reported: a new thread is not a new process. Blocking; one reader
at a time.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct

import attrs

_NETLINK_CONNECTOR = 11
_CN_IDX_PROC = 1
_CN_VAL_PROC = 1
_LISTEN = 1
_IGNORE = 2
_NLMSG_DONE = 3
_FORK = 0x1
_EXIT = 0x80000000
_NLMSG = struct.Struct("=IHHII")
_CN_MSG = struct.Struct("=IIIIHH")
_EVENT = struct.Struct("=IIQ")
_FORK_DATA = struct.Struct("=IIII")
_EXIT_DATA = struct.Struct("=II")
_RECEIVE_BUFFER = 8 << 20
_SOL_NETLINK = 270
_ADD_MEMBERSHIP = 1
_DROP_MEMBERSHIP = 2
_SO_RCVBUFFORCE = 33  # Linux; not in the socket module


class ForksUnavailable(Exception):
    """This process may not (or this kernel cannot) hear of forks."""


@attrs.frozen
class ProcessEvent:
    """`pid` forked from `parent` (both thread group ids), or exited (`parent` 0);
    `lost` when the socket overflowed and events were dropped before this read."""

    pid: int
    parent: int
    exited: bool = False
    lost: bool = False


class ForkEvents:
    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    @classmethod
    def open(cls) -> ForkEvents:
        try:
            sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_CONNECTOR)
        except (OSError, AttributeError) as exc:
            raise ForksUnavailable(f"no process connector here ({exc})") from exc
        try:
            with contextlib.suppress(OSError):  # forcing a larger buffer takes CAP_NET_ADMIN
                sock.setsockopt(socket.SOL_SOCKET, _SO_RCVBUFFORCE, _RECEIVE_BUFFER)
            sock.bind((0, _CN_IDX_PROC))
            sock.send(_request(_LISTEN))
            sock.setblocking(False)
        except OSError as exc:
            sock.close()
            raise ForksUnavailable(f"the process connector refused: {exc}") from exc
        return cls(sock)

    def fileno(self) -> int:
        return self._sock.fileno()

    def pause(self) -> None:
        """Hear of no process until `resume` (a busy machine forks thousands a second)."""
        with contextlib.suppress(OSError):
            self._sock.setsockopt(_SOL_NETLINK, _DROP_MEMBERSHIP, _CN_IDX_PROC)
            self._sock.send(_request(_IGNORE))
        self.read()  # what was queued before

    def resume(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.setsockopt(_SOL_NETLINK, _ADD_MEMBERSHIP, _CN_IDX_PROC)
            self._sock.send(_request(_LISTEN))

    def read(self) -> list[ProcessEvent]:
        """What happened since the last read (never blocks)."""
        events: list[ProcessEvent] = []
        while True:
            try:
                data = self._sock.recv(65536)
            except BlockingIOError:
                return events
            except OSError as exc:  # ENOBUFS: the kernel dropped some
                events.append(ProcessEvent(0, 0, lost=True))
                if exc.errno is None:
                    return events
                continue
            _parse(data, events)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.send(_request(_IGNORE))
        self._sock.close()


def _request(operation: int) -> bytes:
    body = struct.pack("=I", operation)
    message = _CN_MSG.pack(_CN_IDX_PROC, _CN_VAL_PROC, 0, 0, len(body), 0) + body
    return _NLMSG.pack(_NLMSG.size + len(message), _NLMSG_DONE, 0, 0, os.getpid()) + message


def _parse(data: bytes, events: list[ProcessEvent]) -> None:
    offset = 0
    while offset + _NLMSG.size + _CN_MSG.size + _EVENT.size <= len(data):
        length = _NLMSG.unpack_from(data, offset)[0]
        if length < _NLMSG.size:
            return
        start = offset + _NLMSG.size + _CN_MSG.size
        what = _EVENT.unpack_from(data, start)[0]
        body = start + _EVENT.size
        if what == _FORK and body + _FORK_DATA.size <= len(data):
            _, parent, child_pid, child = _FORK_DATA.unpack_from(data, body)
            if child_pid == child:  # a process, not a thread
                events.append(ProcessEvent(child, parent))
        elif what == _EXIT and body + _EXIT_DATA.size <= len(data):
            pid, group = _EXIT_DATA.unpack_from(data, body)
            if pid == group:
                events.append(ProcessEvent(group, 0, exited=True))
        offset += (length + 3) & ~3
