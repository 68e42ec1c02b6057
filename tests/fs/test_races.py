"""Check-then-use races: a process flips a folder or a file with a symlink pointing outside
(renameat2 RENAME_EXCHANGE about every 0.5 ms) while tools use the path. Nothing outside the
workspace may ever be read or written, whatever the timing, and a path that changed under
a call is a refusal (workspace.outside_scope, FS_NOT_FOUND ...), never internal_error.

A run proves something only if swaps happened while calls ran: the flipper counts its
swaps in a shared page, each test reads the count before and after every call, and a run
in which no call saw a swap inside its window fails instead of passing untested."""

from __future__ import annotations

import mmap
import struct
import subprocess
import sys
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from lsp_server.protocol import CallResult
from lsp_server.runtime.dispatch import Runtime
from tests.helpers import call_tool, make_runtime, text_of

TRIES = 200
MAX_EDIT_TRIES = 3000
SECRET = "OUTSIDE-SECRET"

# The flipper is a separate process (as an agent's background job would be), so that its
# flips interleave with the tool's system calls instead of waiting for the GIL.
# It counts its swaps in the first 8 bytes of a shared file (argv[3]).
FLIPPER = r"""
import ctypes, mmap, os, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
c_str, c_int = ctypes.c_char_p, ctypes.c_int
libc.renameat2.argtypes = [c_int, c_str, c_int, c_str, ctypes.c_uint]
AT_FDCWD, RENAME_EXCHANGE = -100, 2
a, b = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
with open(sys.argv[3], "r+b") as counter_file:
    counter = mmap.mmap(counter_file.fileno(), 8)
swaps = 0
print("ready", flush=True)
while True:
    if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
        sys.exit(f"renameat2: {os.strerror(ctypes.get_errno())}")
    swaps += 1
    counter[:8] = struct.pack("<Q", swaps)
    time.sleep(0.0005)
"""


class Flips:
    """The flipper's swap count, and how many calls saw at least one swap while they ran."""

    def __init__(self, page: mmap.mmap) -> None:
        self.page = page
        self.windows_with_swaps = 0
        self.calls = 0

    def count(self) -> int:
        value: int = struct.unpack("<Q", self.page[:8])[0]
        return value

    async def watch(self, call: Awaitable[CallResult]) -> CallResult:
        """Run one call, counting whether a swap landed inside its window; a race must
        never show as internal_error."""
        before = self.count()
        result = await call
        self.calls += 1
        self.windows_with_swaps += self.count() > before
        assert result.error is None or result.error.code != "internal_error", text_of(result)
        return result

    def require_swaps(self) -> None:
        assert self.windows_with_swaps > 0, (
            f"no swap happened inside any of {self.calls} calls: this run tested nothing"
        )


@contextmanager
def flipping(real: Path, link: Path) -> Iterator[Flips]:
    counter = real.parent.parent / f".flips-{real.name}"
    counter.write_bytes(bytes(8))
    proc = subprocess.Popen(
        [sys.executable, "-c", FLIPPER, str(real), str(link), str(counter)],
        stdout=subprocess.PIPE,
        text=True,
    )
    with counter.open("r+b") as handle:
        page = mmap.mmap(handle.fileno(), 8)
    flips = Flips(page)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield flips
        assert proc.poll() is None, "the flipper stopped"
        if flips.calls:
            flips.require_swaps()
    finally:
        proc.kill()
        proc.wait()
        page.close()
    if link.is_dir() and not link.is_symlink():
        real.rename(real.with_name("tmp-swap"))  # put the pair back in order
        link.rename(real)
        real.with_name("tmp-swap").rename(link)
    elif real.is_symlink():
        tmp = real.with_name("tmp-swap")
        real.rename(tmp)
        link.rename(real)
        tmp.rename(link)


@pytest.fixture
def arena(tmp_path: Path) -> tuple[Path, Path, Runtime]:
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    (root / "d").mkdir(parents=True)
    outside.mkdir()
    (root / "d" / "inner.txt").write_text("inner = 0\n")
    (outside / "inner.txt").write_text(f"inner = 0\n{SECRET}\n")
    (root / "d_link").symlink_to(outside)
    (root / "f.txt").write_text("value = 0\n")
    (outside / "f.txt").write_text(f"value = 0\n{SECRET}\n")
    (root / "f_link").symlink_to(outside / "f.txt")
    return root, outside, make_runtime(root)


def outside_state(outside: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(outside.iterdir())}


def test_flipper_flips(arena: tuple[Path, Path, Runtime]) -> None:
    """The harness itself: while flipping, `d` is seen both as the folder and as the link."""
    root, _, _ = arena
    seen = set()
    with flipping(root / "d", root / "d_link"):
        for _ in range(20000):
            seen.add((root / "d").is_symlink())
            if len(seen) == 2:
                break
    assert seen == {True, False}


async def test_write_file_create_into_a_flipping_folder(arena: tuple[Path, Path, Runtime]) -> None:
    root, outside, runtime = arena
    before = outside_state(outside)
    created = 0
    with flipping(root / "d", root / "d_link") as flips:
        for i in range(TRIES):
            result = await flips.watch(
                call_tool(runtime, "write_file", {"path": f"d/n{i}.txt", "content": "x"})
            )
            created += result.error is None
    assert outside_state(outside) == before
    assert created > 0  # the folder was usable part of the time


async def test_edit_file_of_a_flipping_file(arena: tuple[Path, Path, Runtime]) -> None:
    """Most edits of a flipping file are refused (each of its checks sees the link about
    half the time: about 2 % land on an idle machine, fewer under load), so after TRIES
    the test goes on, up to MAX_EDIT_TRIES, until one has landed: the file must stay
    editable between flips, and a run that found it never editable fails."""
    root, outside, runtime = arena
    before = outside_state(outside)
    leaked = edited = tries = 0
    current = "value = "  # what the last read that was allowed showed
    with flipping(root / "f.txt", root / "f_link") as flips:
        while tries < TRIES or (edited == 0 and tries < MAX_EDIT_TRIES):
            tries += 1
            read = await flips.watch(call_tool(runtime, "read_file", {"path": "f.txt"}))
            leaked += SECRET in text_of(read)
            if read.error is None:
                current = "value := " if "value := " in text_of(read) else "value = "
            new = "value = " if current == "value := " else "value := "
            result = await flips.watch(
                call_tool(
                    runtime,
                    "edit_file",
                    {"path": "f.txt", "old_string": current, "new_string": new},
                )
            )
            if result.error is None:
                edited += 1
                current = new
    assert leaked == 0
    assert outside_state(outside) == before
    assert edited > 0, f"no edit landed in {tries} tries"


async def test_read_file_of_a_flipping_file(arena: tuple[Path, Path, Runtime]) -> None:
    root, _, runtime = arena
    leaked = read = 0
    with flipping(root / "f.txt", root / "f_link") as flips:
        for _ in range(TRIES):
            result = await flips.watch(call_tool(runtime, "read_file", {"path": "f.txt"}))
            leaked += SECRET in text_of(result)
            read += result.error is None
    assert leaked == 0
    assert read > 0


async def test_read_file_under_a_flipping_folder(arena: tuple[Path, Path, Runtime]) -> None:
    root, _, runtime = arena
    leaked = read = 0
    with flipping(root / "d", root / "d_link") as flips:
        for _ in range(TRIES):
            result = await flips.watch(call_tool(runtime, "read_file", {"path": "d/inner.txt"}))
            leaked += SECRET in text_of(result)
            read += result.error is None
    assert leaked == 0
    assert read > 0


async def test_move_file_into_a_flipping_folder(arena: tuple[Path, Path, Runtime]) -> None:
    root, outside, runtime = arena
    before = outside_state(outside)
    for i in range(TRIES):
        (root / f"src{i}.txt").write_text(f"source {i}\n")
        read = await call_tool(runtime, "read_file", {"path": f"src{i}.txt"})
        assert read.error is None
    moved = 0
    with flipping(root / "d", root / "d_link") as flips:
        for i in range(TRIES):
            result = await flips.watch(
                call_tool(
                    runtime,
                    "move_file",
                    {"source_path": f"src{i}.txt", "destination_path": f"d/m{i}.txt"},
                )
            )
            moved += result.error is None
    assert outside_state(outside) == before
    assert moved > 0


@pytest.mark.parametrize("path", ["d", "d/inner.txt"])
async def test_grep_under_a_flipping_folder(arena: tuple[Path, Path, Runtime], path: str) -> None:
    root, _, runtime = arena
    leaked = found = 0
    with flipping(root / "d", root / "d_link") as flips:
        for _ in range(TRIES):
            result = await flips.watch(
                call_tool(runtime, "grep", {"pattern": "inner|SECRET", "path": path})
            )
            leaked += SECRET in text_of(result)
            found += "inner = 0" in text_of(result)
    assert leaked == 0
    assert found > 0


async def test_grep_of_a_flipping_file(arena: tuple[Path, Path, Runtime]) -> None:
    root, _, runtime = arena
    leaked = found = 0
    with flipping(root / "f.txt", root / "f_link") as flips:
        for _ in range(TRIES):
            result = await flips.watch(
                call_tool(runtime, "grep", {"pattern": "value|SECRET", "path": "f.txt"})
            )
            leaked += SECRET in text_of(result)
            found += "value = 0" in text_of(result)
    assert leaked == 0
    assert found > 0
