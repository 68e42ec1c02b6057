"""Two toolhost processes on one root (two agents, each with its own server) share the
root's shadow repository and its index. Each snapshot leaves the index whole, under the
repository's lock, and says so (shadow/repository.py): the other process's next snapshot
adds only what its own watcher saw change since its last one, instead of scanning the
whole root every time the other has written the index."""

from __future__ import annotations

import subprocess
from pathlib import Path

from lsp_server.checkpoints.recorder import Checkpoints
from tests.checkpoints.test_root_budget import engine, make_tree


async def command(checkpoints: Checkpoints, call_id: str, script: str, root: Path) -> object:
    """Run `script` checkpointed: (how the snapshot before it was taken, its changes)."""
    window = await checkpoints.before_command(call_id, "s", "bash", script)
    before = checkpoints.watchers.scans.get(root)
    subprocess.run(["sh", "-c", script], cwd=root, check=True)
    made = await checkpoints.after_command(window)
    await checkpoints.settle()
    return before, {(record.path, record.change) for c in made for record in c.files}


async def test_two_servers_on_one_root_add_only_what_changed(tmp_path: Path) -> None:
    root, state = tmp_path / "root", tmp_path / "state"
    make_tree(root, 20, 5)
    a, b = engine([root], state), engine([root], state)
    try:
        await command(a, "a-1", "echo a >> d0/e0/f0.txt", root)  # (each one's first: scans)
        left = a.store(root).repo.current()
        # b's first snapshot is compared with a's last, not with the empty tree (on the
        # 200,000-file repository: 0.3 s of git and 3.9 s of Python less)
        await b.after_command(await b.before_command("b-0", "s", "bash", "true"))
        diffed = b.store(root).repo._last_diff
        assert left is not None and diffed is not None and diffed[:2] == (left, left)
        await command(b, "b-1", "echo b >> d0/e1/f0.txt", root)
        for n in range(2):
            found = await command(a, f"a-{n + 2}", f"echo {n} >> d1/e1{n}/f0.txt", root)
            assert found == ("changed paths", {(f"d1/e1{n}/f0.txt", "modified")})
            found = await command(b, f"b-{n + 2}", f"echo {n} > b{n}.txt", root)
            assert found == ("changed paths", {(f"b{n}.txt", "created")})
    finally:
        a.watchers.close()
        b.watchers.close()


async def test_an_index_no_whole_snapshot_left_is_scanned(tmp_path: Path) -> None:
    """An index another process changed without finishing a snapshot (it died midway):
    nobody adds to it; the next snapshot scans the whole root."""
    root, state = tmp_path / "root", tmp_path / "state"
    make_tree(root, 5, 2)
    a, b = engine([root], state), engine([root], state)
    try:
        await command(a, "a-1", "true", root)
        await command(b, "b-1", "true", root)
        (root / "half.txt").write_text("added by a snapshot that never ended")
        b.store(root).repo.git.run("add", "--", "half.txt")  # the dead process's last step
        scan, made = await command(a, "a-2", "echo more >> d0/e0/f0.txt", root)
        assert str(scan).startswith("full scan: the shadow index changed since the last")
        assert made == {("d0/e0/f0.txt", "modified")}
    finally:
        a.watchers.close()
        b.watchers.close()
