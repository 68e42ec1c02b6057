"""An outside process appends to a file while toolhost edits it: nothing vanishes silently.

The version is checked against the open file immediately before the rename, under the
file lock; an append that still lands in the old file in the microseconds between is
detected after the rename and reported in the result with the bytes it carried."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.helpers import call_tool, make_runtime, text_of

EDITS = 60
APPENDER = r"""
import os, random, sys, time
path = sys.argv[1]
n = 0
print("ready", flush=True)
while not os.path.exists(sys.argv[2]):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    os.write(fd, f"A{n}\n".encode())
    os.close(fd)
    n += 1
    time.sleep(random.random() * 0.02)
print(n, flush=True)
"""


async def test_no_append_vanishes_silently(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    target = root / "log.txt"
    target.write_text("head = 0\n")
    stop = tmp_path / "stop"
    runtime = make_runtime(root)
    appender = subprocess.Popen(
        [sys.executable, "-c", APPENDER, str(target), str(stop)], stdout=subprocess.PIPE, text=True
    )
    assert appender.stdout is not None and appender.stdout.readline().strip() == "ready"
    edited = stale = 0
    reported: set[str] = set()
    try:
        while edited < EDITS and stale < 20 * EDITS:
            read = await call_tool(runtime, "read_file", {"path": "log.txt", "limit": 1})
            head = re.search(r"head = (\d+)", text_of(read))
            assert head is not None, text_of(read)
            value = int(head.group(1))
            result = await call_tool(
                runtime,
                "edit_file",
                {
                    "path": "log.txt",
                    "old_string": f"head = {value}\n",
                    "new_string": f"head = {value + 1}\n",
                },
            )
            if result.error is not None:
                assert result.error.code == "FS_STALE_VERSION", text_of(result)
                stale += 1
                continue
            edited += 1
            reported.update(re.findall(r"^A\d+$", text_of(result), re.MULTILINE))
    finally:
        stop.touch()
        out, _ = appender.communicate(timeout=60)
    appended = int(out.strip())
    final = set(target.read_text().splitlines())
    silently_lost = [f"A{n}" for n in range(appended) if f"A{n}" not in final | reported]
    assert edited > 0 and appended > 0
    assert silently_lost == [], f"{len(silently_lost)} of {appended} appends vanished silently"


async def test_a_writer_holding_the_old_file_open_is_reported(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    target = root / "log.txt"
    target.write_text("head = 0\n")
    runtime = make_runtime(root)
    await call_tool(runtime, "read_file", {"path": "log.txt"})
    held = os.open(target, os.O_WRONLY | os.O_APPEND)  # a logger that never closes its file
    try:
        result = await call_tool(
            runtime,
            "edit_file",
            {"path": "log.txt", "old_string": "head = 0", "new_string": "head = 1"},
        )
    finally:
        os.close(held)
    assert result.error is None, text_of(result)
    assert "still has the old log.txt open for writing" in text_of(result)
    assert target.read_text() == "head = 1\n"
