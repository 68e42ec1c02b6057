"""Nothing outlives the server. Sandboxed commands: bwrap's --die-with-parent and their PID
namespace. Commands without bubblewrap: the supervisor (supervisor.py, a child subreaper
with a parent-death signal). Child language servers: a parent-death signal.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

import attrs

_PR_SET_PDEATHSIG = 1
# The file, in a command's state folder, that lists what it left running (pid pgid sid
# command line per line): written by the sandbox's EXIT trap or by the supervisor.
LEFTOVERS_NAME = "leftovers"
SUPERVISOR = Path(__file__).with_name("supervisor.py")


def _load_prctl() -> Callable[..., int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        prctl: Callable[..., int] = ctypes.CDLL(name, use_errno=True).prctl
        return prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()


def parent_death_hook(sig: int = signal.SIGKILL) -> Callable[[], None] | None:
    """A preexec function: the child gets `sig` when the server dies (even by SIGKILL).
    None where prctl is not available (not Linux)."""
    prctl = _PRCTL
    if prctl is None:
        return None
    parent = os.getpid()

    def set_parent_death_signal() -> None:
        prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)
        # The server may have died between fork and prctl: then nobody would signal us.
        if os.getppid() != parent:
            with contextlib.suppress(OSError):
                os.kill(os.getpid(), sig)

    return set_parent_death_signal


@attrs.frozen
class Supervised:
    """Runs a command under the supervisor: the launcher when no sandbox can be used."""

    python: str = sys.executable
    grace_seconds: float = 1.0
    namespace: ClassVar[bool] = False
    """Its processes are the host's (the supervisor, not an EXIT trap, lists leftovers)."""

    def wrap(
        self, argv: Sequence[str], cwd: Path, state_dir: Path, keep_daemons: bool = False
    ) -> list[str]:
        return [
            self.python, "-I", "-S", str(SUPERVISOR), str(os.getpid()),
            str(state_dir / LEFTOVERS_NAME), str(self.grace_seconds),
            "1" if keep_daemons else "0", "--", *argv,
        ]  # fmt: skip

    def release(self, state_dir: Path) -> None:
        """Nothing is held for a supervised command."""
