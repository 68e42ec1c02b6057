"""A small JSON file of values under keys (a hash of the sources they were computed
from), in the state folder: the newest `KEEP` keys are kept, so that two installed
versions, or two MCP clients asking for different surfaces, sharing one state folder do
not each throw the other's answer away on every start. A file that cannot be read or
written is simply not used; concurrent writers each replace it whole (atomically), and
the loser's entry is computed again at its next start."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

KEEP = 8


def _entries(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def load(path: Path, key: str) -> dict[str, Any] | None:
    value = _entries(path).get(key)
    return value if isinstance(value, dict) else None


def store(path: Path, key: str, value: dict[str, Any]) -> None:
    """Add (or refresh) `key`'s value, dropping the oldest keys past KEEP."""
    entries = _entries(path)
    entries.pop(key, None)
    entries[key] = value  # the newest last: a dict keeps its order through JSON
    kept = dict(list(entries.items())[-KEEP:])
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary.write_text(json.dumps(kept), "utf-8")
        temporary.replace(path)  # atomic: a concurrent start never reads half a file
