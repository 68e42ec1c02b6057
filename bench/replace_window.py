"""The window an outside write can still fall into during an atomic replace, and what the
race-free file access costs.

- window: from the end of the last version check (read and hash of the open file, name
  still pointing at it) to the return of rename(2), in toolhost's `diskwrite.replace`; the
  reference is the order used before (check, then write and fsync the temporary file,
  then rename), timed on the same files in the same run.
- cost: one whole replace (toolhost: descriptors beneath the root, check, lease probe) and
  one read (`beneath.read_regular`: openat2 or the component walk, fstat and read from one
  descriptor) against the plain path-based equivalents.

    .venv/bin/python bench/replace_window.py --rounds 2000
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from lsp_server.fs import beneath, diskwrite
from lsp_server.fs.textio import FileVersion, sha256_hex

DEPTH = ("src", "pkg", "module")
HASH_LIMIT = 64 * 1024 * 1024


def current_version(path: Path) -> tuple[int, str]:
    """The old check: stat and hash the file by its path."""
    return path.stat().st_size, sha256_hex(path.read_bytes())


def atomic_replace(path: Path, data: bytes) -> None:
    """The old path-based replace: temp file beside it, fsync, mode, rename, fsync folder."""
    mode = path.stat().st_mode & 0o7777
    temp = path.with_name(f".{path.name}.bench-tmp")
    with open(temp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    temp.chmod(mode)
    temp.replace(path)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def accept(_: FileVersion) -> None:
    """The version check: always current here (nobody else writes)."""


def old_window(path: Path, data: bytes) -> int:
    """The old order: the check happened here, then the temp file was written and synced."""
    current_version(path)
    started = time.perf_counter_ns()
    atomic_replace(path, data)
    return time.perf_counter_ns() - started


def timed(action: Callable[[], object], rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        started = time.perf_counter_ns()
        action()
        times.append((time.perf_counter_ns() - started) / 1000)
    return times


def row(name: str, micros: list[float]) -> str:
    micros = sorted(micros)
    p99 = micros[min(len(micros) - 1, int(len(micros) * 0.99))]
    return f"| {name} | {statistics.median(micros):.1f} | {p99:.1f} | {micros[-1]:.1f} |"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--size", type=int, default=4096, help="file size in bytes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(os.path.realpath(tmp))
        path = root.joinpath(*DEPTH, "file.txt")
        path.parent.mkdir(parents=True)
        data = b"x" * (args.size - 1) + b"\n"
        path.write_bytes(data)
        new_windows, old_windows = [], []
        for _ in range(args.rounds):
            written = diskwrite.replace(root, path, "file.txt", data, accept, HASH_LIMIT)
            new_windows.append(written.window_ns / 1000)
            old_windows.append(old_window(path, data) / 1000)
        replace_new = timed(
            lambda: diskwrite.replace(root, path, "file.txt", data, accept, HASH_LIMIT),
            args.rounds,
        )
        replace_old = timed(lambda: atomic_replace(path, data), args.rounds)
        read_new = timed(lambda: beneath.read_regular(root, path, "file.txt", 1 << 30), args.rounds)
        read_old = timed(lambda: (path.stat(), path.read_bytes()), args.rounds)
    print(f"{args.rounds} rounds, {args.size} byte file, {len(DEPTH)} folders deep; microseconds")
    print("| measure | p50 | p99 | max |\n| --- | --- | --- | --- |")
    print(row("window: last check -> rename (toolhost)", new_windows))
    print(row("window: check -> temp write, fsync, rename (old order)", old_windows))
    print(row("replace, descriptors + check + lease probe (toolhost)", replace_new))
    print(row("replace, path-based (old atomic_replace, no check)", replace_old))
    print(row("read, beneath the root (toolhost)", read_new))
    print(row("read, stat + read_bytes by path", read_old))
    ratio = statistics.median(old_windows) / statistics.median(new_windows)
    print(f"window ratio (old / toolhost, p50): {ratio:.0f}x")
    cost = statistics.median(replace_new) / statistics.median(replace_old)
    print(f"replace cost ratio (toolhost / old, p50): {cost:.2f}")
    read = statistics.median(read_new) / statistics.median(read_old)
    print(f"read cost ratio (toolhost / plain, p50): {read:.2f}")


if __name__ == "__main__":
    main()
