"""A row per platform: which sandbox backend runs commands there, and how to find it.

Only Linux has a backend (bubblewrap). Elsewhere `find` says why there is none, and the
shell fails closed (every command that is not a plain read asks).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable

import attrs

_PROBE_TIMEOUT_SECONDS = 10.0


@attrs.frozen
class BackendFound:
    name: str
    executable: str | None
    """The program that wraps commands; None when the backend cannot run here."""
    version: str | None
    problem: str | None
    """Why no sandbox can start (None when it can)."""


def _find_bubblewrap(path: str | None) -> BackendFound:
    bwrap = shutil.which("bwrap", path=path)
    if bwrap is None:
        return BackendFound(
            "bubblewrap",
            None,
            None,
            "bubblewrap (bwrap) is not on PATH; install the Debian package bubblewrap",
        )
    # The same namespaces every command uses: fails when user namespaces are off.
    probe = [
        bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
        "--unshare-pid", "--unshare-net", "--die-with-parent", "--new-session", "true",
    ]  # fmt: skip
    try:
        done = subprocess.run(
            probe, capture_output=True, text=True, timeout=_PROBE_TIMEOUT_SECONDS, check=False
        )
        version = subprocess.run(
            [bwrap, "--version"], capture_output=True, text=True, timeout=5, check=False
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return BackendFound("bubblewrap", None, None, f"{bwrap} could not be run ({exc})")
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        return BackendFound(
            "bubblewrap",
            None,
            version or None,
            f"{bwrap} cannot start a sandbox here ({said[0]}); user namespaces may be disabled "
            "(sysctl kernel.unprivileged_userns_clone / user.max_user_namespaces)",
        )
    return BackendFound("bubblewrap", bwrap, version or None, None)


def _no_backend(platform: str) -> Callable[[str | None], BackendFound]:
    def find(path: str | None) -> BackendFound:
        return BackendFound("none", None, None, f"no sandbox backend on {platform} (Linux only)")

    return find


@attrs.frozen
class PlatformRow:
    platform: str
    """sys.platform prefix."""
    find: Callable[[str | None], BackendFound]


PLATFORMS: tuple[PlatformRow, ...] = (
    PlatformRow("linux", _find_bubblewrap),
    PlatformRow("darwin", _no_backend("macOS")),
    PlatformRow("win32", _no_backend("Windows")),
)


def find_backend(path: str | None, platform: str = sys.platform) -> BackendFound:
    """Probe this platform's backend (blocking: runs bwrap once). `path`: the PATH to
    search (None: the process's own)."""
    for row in PLATFORMS:
        if platform.startswith(row.platform):
            return row.find(path)
    return _no_backend(platform)(path)
