"""Where toolhost keeps its own state (audit log, index, results, CLI sessions, trust, tokens) and
reads the user's config: never the workspace. Resolved once per process entry point
(`Dirs.from_environment()`) and handed down, so every part agrees on the same folders."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple


class Dirs(NamedTuple):
    """A named tuple, not an attrs class: `toolhost mcp`'s front finds the state folder before
    anything else is imported (attrs costs ~15 ms on the loop while the listing waits)."""

    state: Path
    config: Path
    attach: Path | None = None
    """Where an editor's `toolhost serve` publishes its attach socket for `toolhost mcp`:
    $XDG_RUNTIME_DIR/toolhost, else `run/` in the state folder (see lsp_server/mcp)."""

    @classmethod
    def from_environment(cls) -> Dirs:
        """TOOLHOST_STATE_DIR, else $XDG_STATE_HOME/toolhost; $XDG_CONFIG_HOME/toolhost."""
        override = os.environ.get("TOOLHOST_STATE_DIR")
        if override:
            state = Path(override)
        else:
            base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
            state = Path(base) / "toolhost"
        config_base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        runtime = os.environ.get("XDG_RUNTIME_DIR")
        attach = Path(runtime) / "toolhost" if runtime else state / "run"
        return cls(state=state, config=Path(config_base) / "toolhost", attach=attach)

    @property
    def attach_folder(self) -> Path:
        return self.attach or self.state / "run"

    @property
    def cli_sessions(self) -> Path:
        """`toolhost call` sessions kept between invocations (runtime/sessions/session_files.py)."""
        return self.state / "cli-sessions"

    @property
    def user_config_file(self) -> Path:
        return self.config / "config.toml"
