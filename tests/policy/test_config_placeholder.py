"""The sandbox holds a missing `.toolhost.toml` with an empty, marked placeholder while a
command runs: that is no workspace config (status would list an empty unapproved file) and
its appearing is no config change (the editor's watcher would reload the layers)."""

from __future__ import annotations

import os
from pathlib import Path

from lsprotocol import types

from lsp_server.config.approval import names_workspace_config
from lsp_server.config.trust import TrustStore
from lsp_server.config.workspace_file import read_workspace_file
from lsp_server.sandbox.placeholders import MARK_NS


def _placeholder(root: Path) -> Path:
    path = root / ".toolhost.toml"
    path.touch()
    os.utime(path, ns=(MARK_NS, MARK_NS))
    return path


def _created(path: Path) -> types.DidChangeWatchedFilesParams:
    event = types.FileEvent(uri=path.as_uri(), type=types.FileChangeType.Created)
    return types.DidChangeWatchedFilesParams(changes=[event])


def test_a_placeholder_is_no_workspace_config(tmp_path: Path) -> None:
    path = _placeholder(tmp_path)
    problems: list[str] = []
    notices: list[str] = []
    found = read_workspace_file(tmp_path, TrustStore(tmp_path / "state"), problems, notices)
    assert found is None and not problems and not notices
    assert not names_workspace_config([tmp_path], _created(path))


def test_an_empty_file_someone_wrote_is_still_a_config(tmp_path: Path) -> None:
    path = tmp_path / ".toolhost.toml"
    path.touch()
    found = read_workspace_file(tmp_path, TrustStore(tmp_path / "state"), [], [])
    assert found is not None and not found.trusted
    assert names_workspace_config([tmp_path], _created(path))
