"""`toolhost index [FOLDER]` (or `--root FOLDER`): build or refresh a symbol index from the
command line (the server then starts warm), with a progress bar on a terminal."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TextIO

from lsp_server.home.dirs import Dirs

BAR_WIDTH = 30


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    index = commands.add_parser("index", help="build or refresh the symbol index of a folder")
    index.add_argument(
        "folder",
        type=Path,
        nargs="?",
        default=None,
        help="the folder (as --root); default: this one",
    )
    index.add_argument("--root", type=Path, default=None, help="default: this folder")
    index.add_argument(
        "--exclude", action="append", default=[], help="gitignore-style pattern to skip"
    )
    index.add_argument(
        "--jobs", type=int, default=None, metavar="N",
        help="parser processes (default: one per core)",
    )  # fmt: skip


class ProgressBar:
    """`[#####.....] 120/400 files` redrawn in place; only on a terminal."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self._last < 0.1 and done < total:
            return
        self._last = now
        filled = BAR_WIDTH * done // total if total else BAR_WIDTH
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        self._stream.write(f"\r[{bar}] {done}/{total} files")
        if done >= total:
            self._stream.write("\n")
        self._stream.flush()


def run(args: argparse.Namespace) -> int:
    if args.folder is not None and args.root is not None and args.folder != args.root:
        print("toolhost index: name the folder once (FOLDER or --root)", file=sys.stderr)
        return 2
    root = args.folder or args.root or Path.cwd()
    return run_index(root, args.exclude, jobs=args.jobs)


def run_index(
    root: Path, excludes: list[str], stream: TextIO | None = None, jobs: int | None = None
) -> int:
    out = stream or sys.stderr
    if jobs is not None and jobs < 1:
        print(f"toolhost index: --jobs must be at least 1 (got {jobs})", file=out)
        return 2
    if not root.is_dir():
        print(f"toolhost index: {root} is not a folder", file=out)
        return 2
    started = time.monotonic()
    state = Dirs.from_environment().state
    from lsp_server.codeintel.index import SymbolIndex, default_index_path  # tree-sitter

    index = SymbolIndex(
        root, default_index_path(root.resolve(), state), excludes=excludes, workers=jobs
    )
    try:
        progress = ProgressBar(out) if out.isatty() else None
        stats = index.refresh(progress)
        files, symbols = index.store.counts()
        print(
            f"indexed {index.root}: {stats.files} files ({stats.parsed} parsed, "
            f"{stats.rehashed} touched but unchanged, {stats.removed} removed), "
            f"{symbols} symbols in {files} files, {time.monotonic() - started:.1f} s; "
            f"index {index.store.path}",
            file=out,
        )
    finally:
        index.close()
    return 0
