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
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            try:
                size = self.path.stat().st_size
            except FileNotFoundError:
                size = 0
            if size and size + len(line) > self.max_bytes:
                self._rotate()
            # O_APPEND: concurrent servers append whole lines, never interleave inside one.
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)

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
