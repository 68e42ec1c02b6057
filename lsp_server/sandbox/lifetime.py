"""Nothing outlives the server. Sandboxed commands: bwrap's --die-with-parent and their PID
namespace. Commands without bubblewrap: the supervisor (supervisor.py, a child subreaper
with a parent-death signal). Child language servers: a parent-death signal
(procs/children.py).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import attrs

from lsp_server.procs.children import LEFTOVERS_NAME

SUPERVISOR = Path(__file__).with_name("supervisor.py")


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
