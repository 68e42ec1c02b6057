"""`toolhost mcp`'s local runtime: its checkpoints start before the rest of its modules is
imported (lsp_server/checkpoints/early_start.py), so that their preparation (in a big git root, the
folder marks a first command waits for) runs beside those imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# Run in a fresh interpreter: what is imported when the checkpoints' preparation starts is
# the point.
SCRIPT = """
import asyncio, json, sys
from pathlib import Path

import pytest

from lsp_server.checkpoints import watch_start

seen = {}
prepare = watch_start.WatchStart.prepare_in_background

def spy(self, roots):
    seen["runtime modules imported"] = [
        name for name in ("lsp_server.compose", "lsp_server.tools.registry") if name in sys.modules
    ]
    return prepare(self, roots)

watch_start.WatchStart.prepare_in_background = spy

from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.mcp.calls.tool_calls import Calls

async def main():
    calls = Calls(Path(sys.argv[1]), "full", "", "never")
    await calls.warm()
    runtime = calls.router().local
    checkpoints = runtime.services.get(Checkpoints)
    seen["its workspace is the runtime's"] = checkpoints.workspace is runtime.workspace
    seen["roots"] = [str(root) for root in runtime.workspace.roots]
    await calls.close()

asyncio.run(main())
print(json.dumps(seen))
"""


def test_the_local_runtime_starts_its_checkpoints_before_importing_the_rest(ws: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(ws)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["runtime modules imported"] == [], seen
    # The runtime took over the checkpoints started early (one preparation, one workspace).
    assert seen["its workspace is the runtime's"] is True, seen
    assert seen["roots"] == [str(ws.resolve())], seen


def test_a_refused_root_starts_no_checkpoints(tmp_path: Path) -> None:
    from lsp_server.checkpoints.early_start import start_early
    from lsp_server.home.dirs import Dirs

    early = start_early([Path("/")], Dirs.from_environment())
    assert early.checkpoints is None
    assert early.loaded.config is not None


def test_a_runtime_that_fails_to_build_stops_what_started_early(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lsp_server import compose
    from lsp_server.checkpoints.early_start import start_early
    from lsp_server.home.dirs import Dirs
    from lsp_server.mcp.calls.local import build_local_runtime

    dirs = Dirs.from_environment()
    early = start_early([ws], dirs)
    assert early.checkpoints is not None
    closed: list[bool] = []
    monkeypatch.setattr(early.checkpoints.watchers, "close", lambda: closed.append(True))

    def failing(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the build failed")

    monkeypatch.setattr(compose, "build_runtime", failing)
    with pytest.raises(RuntimeError, match="the build failed"):
        build_local_runtime(ws, dirs, lambda token, value: None, None, early)
    assert closed == [True]
