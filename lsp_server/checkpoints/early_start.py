"""What `toolhost mcp` starts before it imports the rest of the runtime: the config's layers
and the checkpoints, so that their preparation at start runs beside those imports (about a
second on a 2-core machine) instead of after them. In a git root too big for inotify's
share that preparation places the folder marks the first command's snapshot waits for
(watch_start.py: 27,067 folders take 0.7-1 s); started after the imports, a
command sent as soon as the runtime answered waited for most of them.

`compose.open_runtime(early=...)` takes both over: the layers are its own, the checkpoints
the runtime's (with their workspace). Only what compose would build from the same layers
is built here; the roots are checked as compose checks them, and a refused root starts no
checkpoints (compose refuses it with its own words).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs

from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.config.broad_roots import own_folders, refuse_broad_roots
from lsp_server.config.layers import LoadedConfig, load_layers
from lsp_server.core.errors import ToolError
from lsp_server.fs.workspace import Workspace
from lsp_server.home.dirs import Dirs


@attrs.frozen
class EarlyStart:
    """The layers loaded and the checkpoints started for a runtime not built yet."""

    loaded: LoadedConfig
    checkpoints: Checkpoints | None
    """None where compose will refuse a root."""

    def close(self) -> None:
        """Stop what was started, for a runtime that will not be built."""
        if self.checkpoints is not None:
            self.checkpoints.watchers.close()


def start_early(roots: Sequence[Path], dirs: Dirs) -> EarlyStart:
    """The layers of `roots` and, unless a root is refused, their checkpoints (started:
    their preparation runs in threads of its own)."""
    loaded = load_layers(None, roots, dirs)
    config = loaded.config
    try:
        refuse_broad_roots(roots, config.workspace.extra_roots, dirs)
    except ToolError:
        return EarlyStart(loaded, None)
    workspace = Workspace.from_config(list(roots), config.workspace)
    checkpoints = Checkpoints(workspace, config.checkpoints, dirs.state, keep_out=own_folders(dirs))
    return EarlyStart(loaded, checkpoints)
