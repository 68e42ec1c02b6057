"""Writers under load (bench/writers_load.py): concurrent writes' checkpoints gather into
one batch (one pack, one record file, one thread hop) instead of one batch each, and a
reader never waits for the gathering: its flush cuts it short. BATCH_WAIT is raised to an
hour here, so a flush that waited for it would time the test out."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lsp_server.checkpoints import write_queue
from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.config.tree import CheckpointsConfig
from lsp_server.fs.workspace import Workspace

pytestmark = pytest.mark.timeout(120)

WRITES = 40


async def test_concurrent_writes_gather_and_a_reader_does_not_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(write_queue, "BATCH_WAIT", 3600.0)
    root = tmp_path / "ws"
    root.mkdir()
    for n in range(WRITES):
        (root / f"f{n}.txt").write_text(f"old {n}\n")
    checkpoints = Checkpoints(Workspace([root]), CheckpointsConfig(), tmp_path / "state")

    async def write(n: int, text: str = "new") -> None:
        path = root / f"f{n}.txt"
        window = await checkpoints.before_write(f"c-{n}", f"s{n % 5}", "write_file", [(path, None)])
        path.write_text(f"{text} {n}\n")
        assert await checkpoints.after_write(window)

    await asyncio.gather(*(write(n) for n in range(WRITES // 2)))
    for n in range(WRITES // 2, WRITES):  # spaced: a queue that did not gather would batch
        await write(n)  # each of these alone
        await asyncio.sleep(0.02)
    listed = await checkpoints.listed(limit=WRITES + 10)  # flushes: no hour's wait
    assert sorted(item.checkpoint.call_id for item in listed) == sorted(
        f"c-{n}" for n in range(WRITES)
    )
    store = checkpoints.store(root)
    packs = list((store.repo.git_dir / "objects" / "pack").glob("*.pack"))
    assert len(packs) == 1  # one batch for the forty writes, gathered or spaced
    assert [c.seq for c in store.all()] == list(range(1, WRITES + 1))
    # A single write later: its own batch, seen at once by the next reader.
    await write(0, "newer")
    assert len(await checkpoints.listed(limit=WRITES + 10)) == WRITES + 1
    await checkpoints.settle()
