"""What `toolhost doctor` says of the warm start: whether a warm process serves this code."""

from __future__ import annotations

from pathlib import Path

from lsp_server.home.private_folder import UnsafeFolder
from lsp_server.warm.place import code_stamp, place


def warm_section() -> str:
    try:
        where = place(code_stamp())
    except (OSError, UnsafeFolder) as exc:
        return f"Warm start: unavailable here ({exc}); `--warm` starts run cold."
    try:
        pid = int(where.lock.read_text().strip())
    except (OSError, ValueError):
        pid = 0
    if pid and Path(f"/proc/{pid}").exists() and where.socket.exists():
        return (
            f"Warm start: a warm process (pid {pid}) serves the `--warm` starts of this "
            f"toolhost; its log is {where.log}; `kill {pid}` ends it."
        )
    return (
        "Warm start: no warm process for this toolhost; the first `toolhost mcp --warm` or "
        "`toolhost serve --warm` starts one (docs/WARM.md)."
    )
