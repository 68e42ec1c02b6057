"""SIGKILL at random moments while a large file is rewritten: always the old or the new bytes."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

WRITER = textwrap.dedent(
    """
    import sys, anyio
    from pathlib import Path
    from tests.helpers import call_tool, make_runtime

    root = Path(sys.argv[1])
    contents = [(root / "old.bin").read_text(), (root / "new.bin").read_text()]

    async def main():
        runtime = make_runtime(root / "ws")
        await call_tool(runtime, "read_file", {"path": "big.txt", "limit": 1})
        print("ready", flush=True)
        turn = 1
        while True:
            args = {"path": "big.txt", "content": contents[turn]}
            result = await call_tool(runtime, "write_file", args)
            assert not result.is_error, result
            turn = 1 - turn

    anyio.run(main)
    """
)


@pytest.mark.slow
def test_sigkill_never_leaves_a_torn_file(tmp_path: Path) -> None:
    old = "".join(f"old line {i:08d} {'x' * 60}\n" for i in range(120_000))  # ~9 MB
    new = "".join(f"new line {i:08d} {'y' * 60}\n" for i in range(120_000))
    (tmp_path / "old.bin").write_text(old)
    (tmp_path / "new.bin").write_text(new)
    (tmp_path / "ws").mkdir()
    target = tmp_path / "ws" / "big.txt"
    valid = {old.encode(), new.encode()}
    rng = random.Random(20261129)
    repo = Path(__file__).resolve().parents[2]
    for _ in range(20):
        target.write_text(old)
        child = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path)],
            cwd=repo,
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(repo)},
        )
        assert child.stdout is not None
        assert child.stdout.readline().strip() == b"ready"
        time.sleep(rng.uniform(0.0, 0.5))  # a random moment, not a timing assertion
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert target.read_bytes() in valid
        leftovers = [p for p in target.parent.iterdir() if p.name != "big.txt"]
        for temp in leftovers:  # a killed writer may leave its temp file, never a torn target
            assert temp.name.endswith(".toolhost-tmp")
            temp.unlink()
