"""Credentials in the environments of the user's other processes.

With the sandbox off (and the user's approval) a command can read `/proc/*/environ` of
every process of the user: the agent CLI that started `toolhost mcp` (its API key), the
editor, the user's own shells. Their credential values (names.py) are known secrets too,
read again every RESCAN_SECONDS in a thread (a few hundred small files: ~10 ms). Inside the
sandbox the PID namespace hides those processes anyway.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from lsp_server.secrets.names import CredentialNames
from lsp_server.secrets.redaction import MIN_CHARS, Secret

RESCAN_SECONDS = 10.0
MAX_ENVIRON_BYTES = 256 * 1024


def process_secrets(names: CredentialNames, proc: Path = Path("/proc")) -> tuple[Secret, ...]:
    """The credential values of every process whose environment this user may read."""
    found: dict[str, Secret] = {}
    try:
        entries = [entry.name for entry in os.scandir(proc) if entry.name.isdigit()]
    except OSError:
        return ()  # no /proc (not Linux)
    for pid in entries:
        try:
            fd = os.open(proc / pid / "environ", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            continue  # another user's process, or gone
        try:
            data = os.read(fd, MAX_ENVIRON_BYTES)
        except OSError:
            continue
        finally:
            os.close(fd)
        for item in data.split(b"\0"):
            name, _, value = item.decode("utf-8", "replace").partition("=")
            if len(value) < MIN_CHARS or value in found or not names.is_credential(name, value):
                continue
            if not (value.startswith("/") and os.path.lexists(value)):  # a path is no secret
                found[value] = Secret(value, name)
    return tuple(found.values())


class ProcessSecrets:
    """The values of process_secrets: the first read on the caller's thread, later ones
    in `background`; `current()` returns the same tuple until they change."""

    def __init__(
        self,
        names: CredentialNames,
        clock: Callable[[], float] = time.monotonic,
        background: Callable[[Callable[[], None]], None] | None = None,
        proc: Path = Path("/proc"),
    ) -> None:
        self._names = names
        self._clock = clock
        self._background = background or _in_a_thread
        self._proc = proc
        self._read_at: float | None = None
        self._reading = False
        self._secrets: tuple[Secret, ...] = ()

    def current(self) -> tuple[Secret, ...]:
        now = self._clock()
        if self._read_at is None:
            self._read_at = now
            self._secrets = process_secrets(self._names, self._proc)
        elif now - self._read_at >= RESCAN_SECONDS and not self._reading:
            self._read_at = now
            self._reading = True
            self._background(self._read)
        return self._secrets

    def _read(self) -> None:
        try:
            found = process_secrets(self._names, self._proc)
            if set(found) != set(self._secrets):
                self._secrets = found
        finally:
            self._reading = False


def _in_a_thread(work: Callable[[], None]) -> None:
    threading.Thread(target=work, name="secret-process-environments", daemon=True).start()
