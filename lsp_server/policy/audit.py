"""The audit log: one JSON line per call in the state folder, rotated by size.

Never in the workspace by default (a repository must not be able to read or rewrite it).
`audit.jsonl` grows to `max_bytes`, then becomes `audit.jsonl.1` (older ones shift up to
`keep`), so the log never grows without bound.
"""

from __future__ import annotations

import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import attrs


@attrs.frozen
class AuditRecord:
    call_id: str
    session: str
    tool: str
    arguments_digest: str
    """sha256 of the validated arguments (16 hex): correlates calls without copying file
    contents or secrets into the log."""
    paths: tuple[str, ...]
    decision: str
    """allow | allow_once | allow_session | allow_always | deny | unattended ..."""
    rule: str | None
    outcome: str
    """"ok" or the error code."""
    duration_ms: float
    time: str = attrs.field(factory=lambda: datetime.now(UTC).isoformat(timespec="milliseconds"))

    def to_json(self) -> dict[str, Any]:
        return {
            "time": self.time,
            "callId": self.call_id,
            "session": self.session,
            "tool": self.tool,
            "argumentsDigest": self.arguments_digest,
            "paths": list(self.paths),
            "decision": self.decision,
            "rule": self.rule,
            "outcome": self.outcome,
            "durationMs": round(self.duration_ms, 3),
        }


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

    def write(self, record: AuditRecord) -> None:
        line = (json.dumps(record.to_json(), ensure_ascii=False) + "\n").encode("utf-8")
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

    async def append(self, record: AuditRecord) -> None:
        await anyio.to_thread.run_sync(self.write, record)
