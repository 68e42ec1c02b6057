"""The audit log: one JSON line per call in the state folder, rotated by size.

Never in the workspace by default (a repository must not be able to read or rewrite it).
`audit.jsonl` grows to `max_bytes`, then becomes `audit.jsonl.1` (older ones shift up to
`keep`), so the log never grows without bound. Its text fields (paths, rule) go through
the server's redactor (lsp_server/secrets) like every result the model sees.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio

from lsp_server.protocol import DidCallParams
from lsp_server.wire import json_bytes

log = logging.getLogger(__name__)


def audit_line(
    record: DidCallParams, time: str | None = None, redact: Callable[[str], str] = str
) -> dict[str, Any]:
    """The JSON line of one finished call: who, what (digest only: no file contents or
    secrets), the decision and its rule, the outcome ("ok" or the error code). `redact`
    replaces known secret values in its text (a path or a rule could hold one)."""
    return {
        "time": time or datetime.now(UTC).isoformat(timespec="milliseconds"),
        "callId": record.call_id,
        "session": record.session,
        "tool": record.tool,
        "argumentsDigest": record.arguments_digest,
        "paths": [redact(path) for path in record.paths],
        "decision": record.decision or "none",
        "rule": redact(record.rule) if record.rule else record.rule,
        "outcome": record.code or "ok",
        "durationMs": round(record.duration_ms, 3),
    } | ({"approvedBy": record.approved_by} if record.approved_by else {})


class AuditLog:
    """Keeps the log open between lines (an open and a close per call cost more than the
    line): the fstat before each line sees it deleted (no links left) or full, whoever
    filled it, and then it is opened again by name. Servers sharing a state folder rotate
    only a full file, so one that still holds the old file finds it full and moves on."""

    def __init__(
        self,
        folder: Path,
        max_bytes: int = 10 * 1024 * 1024,
        keep: int = 3,
        redact: Callable[[str], str] = str,
    ) -> None:
        self.path = folder / "audit.jsonl"
        self.redact = redact
        self.max_bytes = max_bytes
        self.keep = keep
        self._lock = threading.Lock()
        self._fd = -1

    def _rotate(self) -> None:
        for index in range(self.keep - 1, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{index}")
            if older.exists():
                older.replace(self.path.with_name(f"{self.path.name}.{index + 1}"))
        self.path.replace(self.path.with_name(f"{self.path.name}.1"))

    def write(self, record: DidCallParams) -> None:
        line = json_bytes.encode(audit_line(record, redact=self.redact)) + b"\n"
        with self._lock:
            if self._fd < 0 or not self._takes(self._fd, len(line)):
                self.close()
                fd = self._open()
                if not self._takes(fd, len(line)):
                    os.close(fd)
                    self._rotate()
                    fd = self._open()
                self._fd = fd
            os.write(self._fd, line)

    def _takes(self, fd: int, size: int) -> bool:
        """Whether the open file is still the log and has room for `size` more bytes."""
        st = os.fstat(fd)
        return st.st_nlink > 0 and not (st.st_size and st.st_size + size > self.max_bytes)

    def _open(self) -> int:
        """The log for appending. O_APPEND: concurrent servers append whole lines, never
        interleave inside one. The state folder is made when it is missing, not checked
        on every line."""
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        try:
            return os.open(self.path, flags, 0o600)
        except FileNotFoundError:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            return os.open(self.path, flags, 0o600)

    def close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)

    def __del__(self) -> None:
        self.close()

    async def append(self, record: DidCallParams) -> None:
        await anyio.to_thread.run_sync(self.write, record)


class AuditListener:
    """Writes one audit line per finished call. Listed before the didCall listener, so a
    client that sees didCall can already read the matching line."""

    def __init__(self, audit: AuditLog) -> None:
        self.audit = audit
        self._warned = False

    def __call__(self, record: DidCallParams) -> None:
        try:
            # One small O_APPEND write: cheaper than a thread hop, and keeps the order.
            self.audit.write(record)
        except OSError as exc:
            # An unwritable state folder is the user's setup, not a bug: say it once, plainly.
            if not self._warned:
                self._warned = True
                log.warning(
                    "could not write the audit log %s (%s): calls still run, without audit lines",
                    self.audit.path,
                    exc.strerror or exc,
                )
