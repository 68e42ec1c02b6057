"""The server never sets the process umask: it is process-wide, so a folder another thread
makes meanwhile gets the wrong bits. It happened: the attach listener's `umask(0o177)`
around its bind left the first bash command's 0700 state folder without its search bit,
and the command, capabilities dropped in the sandbox, could not write its final folder
("cwd: Permission denied" in the result)."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import NoReturn

import pytest

from lsp_server.attach.listener import AttachListener
from lsp_server.checkpoints import revert_disk
from lsp_server.checkpoints.restore import Put
from lsp_server.fs import textio
from tests.helpers import make_runtime


def _real_umask() -> int:
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


@pytest.fixture
def umask_untouchable(monkeypatch: pytest.MonkeyPatch) -> int:
    umask = _real_umask()

    def refuse(_mask: int) -> NoReturn:
        raise AssertionError("os.umask called: it changes the mask of every thread")

    monkeypatch.setattr(os, "umask", refuse)
    return umask


def test_a_new_files_mode_is_read_not_set(umask_untouchable: int, tmp_path: Path) -> None:
    assert textio.new_file_mode() == 0o666 & ~umask_untouchable
    textio.atomic_write(tmp_path / "new", b"x")
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o666 & ~umask_untouchable
    # A file a revert brings back gets the same bits.
    assert revert_disk.apply(tmp_path, Put("restored", b"x", 0o100644), 1 << 20) is None
    assert stat.S_IMODE((tmp_path / "restored").stat().st_mode) == 0o666 & ~umask_untouchable


async def test_the_attach_socket_is_private_without_a_umask(
    umask_untouchable: int, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()

    async def ready() -> None:
        return None

    listener = AttachListener(tmp_path / "attach", ready)
    listener.bind(make_runtime(root))
    record = await listener.start()
    try:
        assert stat.S_IMODE(record.socket.stat().st_mode) == 0o600
        assert stat.S_IMODE(record.socket.parent.stat().st_mode) == 0o700
    finally:
        await listener.close()
