"""compose.open_runtime, the one way a face opens a runtime: the layers loaded (or handed
in), the asker chosen by them, the problems the face has not seen yet, and the attach socket
wired into the runtime's Lifecycle (started by `start`, gone after `kill_now` or
`shutdown`)."""

from __future__ import annotations

from pathlib import Path

from lsp_server import compose
from lsp_server.attach import attach_records
from lsp_server.attach.listener import AttachListener
from lsp_server.config.layers import LoadedConfig, load_layers
from lsp_server.home.dirs import Dirs
from lsp_server.policy.prompt import Asker
from lsp_server.tools.registry import build_registry


def dirs_of(tmp_path: Path) -> Dirs:
    attach = tmp_path / "run"
    attach.mkdir(mode=0o700)
    return Dirs(state=tmp_path / "state", config=tmp_path / "config", attach=attach)


async def _ready() -> None:
    return None


async def test_the_layers_are_loaded_and_their_problems_handed_to_the_face(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    dirs = dirs_of(tmp_path)
    dirs.user_config_file.parent.mkdir(parents=True)
    dirs.user_config_file.write_text("[nonsense]\nx = 1\n[limits]\nbogus = 2\n")
    seen: list[LoadedConfig] = []

    def asker_for(loaded: LoadedConfig) -> Asker | None:
        seen.append(loaded)
        return None

    opened = compose.open_runtime([root], dirs, asker_for=asker_for, long_lived=False)
    try:
        assert seen == [opened.loaded]
        assert any("nonsense" in problem for problem in opened.problems)
        assert any("limits.bogus" in problem for problem in opened.problems)
        assert opened.runtime.workspace.roots == [root.resolve()]
        assert opened.runtime.registry is build_registry()  # made once, the same everywhere
    finally:
        await opened.lifecycle.shutdown()


async def test_layers_a_face_loaded_are_not_loaded_again_nor_shown_twice(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    dirs = dirs_of(tmp_path)
    loaded = load_layers(None, [root], dirs)
    loaded.problems.append("shown by the face already")
    opened = compose.open_runtime([root], dirs, loaded=loaded, long_lived=False)
    try:
        assert opened.loaded is loaded
        assert opened.problems == []
    finally:
        await opened.lifecycle.shutdown()


async def test_the_attach_socket_starts_with_the_lifecycle_and_goes_with_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    dirs = dirs_of(tmp_path)
    listener = AttachListener(dirs.attach_folder, _ready)
    opened = compose.open_runtime([root], dirs, attach=listener, long_lived=False)
    assert listener.runtime is opened.runtime
    assert attach_records.find_records(dirs.attach_folder, root) == []  # not before `start`
    await opened.lifecycle.start()
    assert [r.socket for r in attach_records.find_records(dirs.attach_folder, root)] == [
        listener.record.socket if listener.record else None
    ]
    opened.lifecycle.kill_now()  # a signal: the record goes at once
    assert attach_records.find_records(dirs.attach_folder, root) == []
    await opened.lifecycle.shutdown()
    assert listener._server is None


async def test_the_acp_face_has_its_reader_and_no_other_face_does(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    dirs = dirs_of(tmp_path)
    acp = compose.open_runtime([root], dirs, registry=build_registry("acp"), long_lived=False)
    other = compose.open_runtime([root], dirs, long_lived=False)
    try:
        assert acp.runtime.registry.get("acp_read_text_file", "minimal") is not None
        assert other.runtime.registry.get("acp_read_text_file", "minimal") is None
        assert "acp_read_text_file" not in build_registry().names("minimal")
    finally:
        await acp.lifecycle.shutdown()
        await other.lifecycle.shutdown()
