"""Where toolhost keeps per-user files: the config file and the state folder (XDG)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path


def state_folder(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_STATE_HOME/toolhost` (default `~/.local/state/toolhost`): audit log, trust."""
    env = os.environ if env is None else env
    base = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "toolhost"


def user_config_file(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CONFIG_HOME/toolhost/config.toml` (default `~/.config/toolhost/config.toml`)."""
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "toolhost" / "config.toml"


def write_atomically(path: Path, data: bytes, mode: int | None = None) -> None:
    """Temp file in the same folder, fsync, rename over: readers see old or new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    temp = Path(temp_name)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        if mode is not None:
            temp.chmod(mode)
        temp.replace(path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
