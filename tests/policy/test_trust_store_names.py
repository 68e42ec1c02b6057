"""The trust store: a root is keyed by its name as bytes (a folder whose name is not UTF-8
is a root like any other), and records made at once by several processes are all kept."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

from lsp_server.config.trust import TrustStore


def test_a_root_whose_name_is_not_utf8_is_recorded_and_found(tmp_path: Path) -> None:
    root = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9"))
    root.mkdir()
    store = TrustStore(tmp_path / "state")
    store.record(root, "bash(make:*)")
    store.approve_config(root, root / ".toolhost.toml", "ab" * 32)
    assert store.is_recorded(root, "bash(make:*)")
    assert store.approved_config(root, root / ".toolhost.toml") == "ab" * 32
    assert not store.is_recorded(tmp_path, "bash(make:*)")


def _record_many(state: str, worker: int) -> None:
    store = TrustStore(Path(state))
    for n in range(25):
        store.record(Path(f"/w{worker}"), f"bash(make {n}:*)")
        store.approve_config(Path(f"/w{worker}"), Path(f"/w{worker}/c{n}.toml"), f"{n:064x}")


def test_records_made_at_once_by_several_processes_are_all_kept(tmp_path: Path) -> None:
    # An editor's server, `toolhost trust` and an MCP server may record at the same time:
    # each rewrites the whole file, so without a lock across processes records vanish.
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_record_many, args=(str(tmp_path), w)) for w in range(6)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=120)
        assert process.exitcode == 0
    store = TrustStore(tmp_path)
    for worker in range(6):
        for n in range(25):
            assert store.is_recorded(Path(f"/w{worker}"), f"bash(make {n}:*)"), (worker, n)
            found = store.approved_config(Path(f"/w{worker}"), Path(f"/w{worker}/c{n}.toml"))
            assert found == f"{n:064x}", (worker, n)
