"""What this user approved, remembered outside the workspace, in the user's state folder
(the agent's sandbox cannot write there, and a write to it always asks).

- Rules approved with allow_always (trusted-rules.json): an `allow` rule in a workspace's
  .toolhost.toml that the user has not approved as a whole applies only when this user wrote
  it there through allow_always. A hash of (workspace root, rule) is kept: it does not reveal
  rule texts of other workspaces.
- Workspace config files approved by content (trusted-configs.json): a root's .toolhost.toml
  may loosen policy only while its bytes hash to the sha256 the user approved (`toolhost
  trust`, the editor's "Trust" button), like Neovim's `:trust` and direnv's `allow`. Any
  change, by anyone, makes it untrusted again until approved anew.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lsp_server.fs.textio import atomic_write


def rule_hash(root: Path, rule_text: str) -> str:
    # surrogateescape: a root whose name is not UTF-8 is still a root (its bytes come back).
    return hashlib.sha256(f"{root}\n{rule_text}".encode(errors="surrogateescape")).hexdigest()


def config_key(root: Path, path: Path) -> str:
    """The record's key for the config file `path` of workspace `root`: the root's real path
    (the same folder opened through a link is the same workspace) and the file's path in it."""
    real_root = os.path.realpath(root)
    inside = os.path.relpath(Path(path).absolute(), Path(root).absolute())
    key = f"config\n{real_root}\n{inside}"
    return hashlib.sha256(key.encode(errors="surrogateescape")).hexdigest()


def content_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class TrustStore:
    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / "trusted-rules.json"
        self.configs_path = state_dir / "trusted-configs.json"
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def _updating(self, path: Path) -> Iterator[None]:
        """One read-modify-write of `path` at a time, across threads and processes (an
        editor's server, `toolhost trust` and an MCP server may record at once: without
        the file lock the later rename would drop the earlier record)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        lock_path = path.with_name(path.name + ".lock")
        with self._lock:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)

    # -- rules approved with allow_always --------------------------------------------------
    def _load(self) -> set[str]:
        hashes = _read_json(self.path).get("hashes")
        return {h for h in hashes if isinstance(h, str)} if isinstance(hashes, list) else set()

    def is_recorded(self, root: Path, rule_text: str) -> bool:
        return rule_hash(root, rule_text) in self._load()

    def record(self, root: Path, rule_text: str) -> None:
        with self._updating(self.path):
            hashes = self._load()
            hashes.add(rule_hash(root, rule_text))
            payload = json.dumps({"version": 1, "hashes": sorted(hashes)}, indent=1) + "\n"
            atomic_write(self.path, payload.encode(), mode=0o600)

    # -- config files approved by content ----------------------------------------------------
    def _configs(self) -> dict[str, str]:
        files = _read_json(self.configs_path).get("files")
        if not isinstance(files, dict):
            return {}
        return {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, str)}

    def approved_config(self, root: Path, path: Path) -> str | None:
        """The sha256 of the content of `path` the user approved last, if any."""
        return self._configs().get(config_key(root, path))

    def approve_config(self, root: Path, path: Path, sha256: str) -> None:
        """Record that the user approved this content (it replaces an earlier approval)."""
        with self._updating(self.configs_path):
            files = self._configs()
            files[config_key(root, path)] = sha256.lower()
            payload = json.dumps({"version": 1, "files": dict(sorted(files.items()))}, indent=1)
            atomic_write(self.configs_path, (payload + "\n").encode(), mode=0o600)
