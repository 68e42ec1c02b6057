"""The audit log: one JSON line per call in the state folder, rotated by size.

Never in the workspace by default (a repository must not be able to read or rewrite it).
`audit.jsonl` grows to `max_bytes`, then becomes `audit.jsonl.1` (older ones shift up to
`keep`), so the log never grows without bound.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio

from lsp_server.protocol import DidCallParams

log = logging.getLogger(__name__)


def audit_line(record: DidCallParams, time: str | None = None) -> dict[str, Any]:
    """The JSON line of one finished call: who, what (digest only: no file contents or
    secrets), the decision and its rule, the outcome ("ok" or the error code)."""
    return {
        "time": time or datetime.now(UTC).isoformat(timespec="milliseconds"),
        "callId": record.call_id,
        "session": record.session,
        "tool": record.tool,
        "argumentsDigest": record.arguments_digest,
        "paths": list(record.paths),
        "decision": record.decision or "none",
        "rule": record.rule,
        "outcome": record.code or "ok",
        "durationMs": round(record.duration_ms, 3),
    } | ({"approvedBy": record.approved_by} if record.approved_by else {})


class AuditLog:
    def __init__(self, folder: Path, max_bytes: int = 10 * 1024 * 1024, keep: int = 3) -> None:
        self.path = folder / "audit.jsonl"
        self.max_bytes = max_bytes
        self.keep = keep
        self._lock = threading.Lock()

    def _rotate(self) -> None:
        for index in range(self.keep - 1, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{index}")
            if older.exists():
                older.replace(self.path.with_name(f"{self.path.name}.{index + 1}"))
        self.path.replace(self.path.with_name(f"{self.path.name}.1"))

    def write(self, record: DidCallParams) -> None:
        line = (json.dumps(audit_line(record), ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:
            fd = self._open()
            try:
                size = os.fstat(fd).st_size
                if size and size + len(line) > self.max_bytes:
                    os.close(fd)
                    fd = -1
                    self._rotate()
                    fd = self._open()
                os.write(fd, line)
            finally:
                if fd >= 0:
                    os.close(fd)

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
