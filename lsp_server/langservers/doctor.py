"""`toolhost doctor`: for each language, the server that would be used, its version, and
how to install what is missing (discovery order as in discovery.py)."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs

from lsp_server.langservers.discovery import (
    NOT_USED,
    ResolvedServer,
    ServerNotFound,
    resolve_server,
)
from lsp_server.langservers.table import SERVER_TABLE, ServerRow

VERSION_TIMEOUT_SECONDS = 15.0


@attrs.frozen
class DoctorRow:
    language: str
    extensions: tuple[str, ...]
    server: ResolvedServer | None
    works: bool
    version: str
    install: tuple[str, ...]
    """Install hints when nothing was found."""


def server_version(server: ResolvedServer) -> tuple[bool, str]:
    """(works, the line of its version output naming a version): the version command runs
    beside the server first. A failing command means a broken install (a rustup proxy
    without the rust-analyzer component, say)."""
    candidate = server.candidate
    if candidate is None or not candidate.version_command:
        command = [server.command[0], "--version"]
    else:
        program, *rest = candidate.version_command
        beside = server.program.parent / program
        command = [str(beside) if beside.is_file() else program, *rest]
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT_SECONDS,
            env=server.child_env(),
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"(version command failed: {exc})"
    lines = [line.strip() for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    if done.returncode != 0:
        return False, lines[0] if lines else f"exit status {done.returncode}"
    # Wrappers print update notices first (pyright): prefer a line naming a version.
    for line in lines:
        if any(ch.isdigit() for ch in line) and "new" not in line.lower():
            return True, line
    return True, lines[0] if lines else "(no version printed)"


def diagnose(
    root: Path,
    configured: Mapping[str, Sequence[str]],
    rows: Sequence[ServerRow] = SERVER_TABLE,
    *,
    project_local: bool = False,
) -> list[DoctorRow]:
    found: list[ResolvedServer | ServerNotFound] = []
    for row in rows:
        try:
            found.append(resolve_server(row, root, configured, project_local=project_local))
        except ServerNotFound as exc:
            found.append(exc)
    # Version commands start node or python wrappers: run them side by side.
    with ThreadPoolExecutor(max_workers=8) as pool:
        versions = list(
            pool.map(
                lambda f: server_version(f) if isinstance(f, ResolvedServer) else (False, ""),
                found,
            )
        )
    report = []
    for row, server, (works, version) in zip(rows, found, versions, strict=True):
        hints = tuple(f"{c.program}: {c.install}" for c in row.candidates)
        extensions = tuple(sorted(row.extensions))
        if isinstance(server, ServerNotFound):
            report.append(DoctorRow(row.name, extensions, None, False, server.detail, hints))
        else:
            report.append(
                DoctorRow(row.name, extensions, server, works, version, () if works else hints)
            )
    return report


def render(report: Sequence[DoctorRow]) -> str:
    lines = []
    for item in report:
        extensions = " ".join(item.extensions)
        if item.server is None:
            lines.append(f"{item.language:<11} MISSING   ({extensions}) {item.version}")
            lines.extend(f"{'':<11}   install {hint}" for hint in item.install)
            continue
        command = " ".join(item.server.command)
        state = "ok    " if item.works else "BROKEN"
        lines.append(f"{item.language:<11} {state}    {item.version}")
        lines.append(f"{'':<11}   {command}  [found via {item.server.source}]")
        if item.server.skipped_project:
            skipped = ", ".join(item.server.skipped_project)
            lines.append(f"{'':<11}   the project's own {skipped} {NOT_USED}")
        lines.extend(f"{'':<11}   install {hint}" for hint in item.install)
    working = sum(1 for item in report if item.works)
    lines.append(f"{working} of {len(report)} languages have a working language server.")
    return "\n".join(lines)
