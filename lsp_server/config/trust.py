"""Rules this user approved with allow_always, remembered outside the workspace.

A repository must not grant itself permissions: an `allow` rule in an untrusted workspace's
.toolhost.toml applies only when this user wrote it there through allow_always. We record a
hash of (workspace root, rule) in the user's state folder -- the repository cannot write
there, and the hash does not reveal rule texts of other workspaces.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

from lsp_server.runtime.fs.textio import atomic_write


def rule_hash(root: Path, rule_text: str) -> str:
    return hashlib.sha256(f"{root}\n{rule_text}".encode()).hexdigest()


class TrustStore:
    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / "trusted-rules.json"
        self._lock = threading.Lock()

    def _load(self) -> set[str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return set()
        hashes = data.get("hashes") if isinstance(data, dict) else None
        return {h for h in hashes if isinstance(h, str)} if isinstance(hashes, list) else set()

    def is_recorded(self, root: Path, rule_text: str) -> bool:
        return rule_hash(root, rule_text) in self._load()

    def record(self, root: Path, rule_text: str) -> None:
        with self._lock:
            hashes = self._load()
            hashes.add(rule_hash(root, rule_text))
            payload = json.dumps({"version": 1, "hashes": sorted(hashes)}, indent=1) + "\n"
            atomic_write(self.path, payload.encode(), mode=0o600)
