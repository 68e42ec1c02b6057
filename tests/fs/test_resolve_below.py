"""Workspace.resolve looks only at the parts of a path below its root (one lstat each)
and hands anything with a symlink or `..` in it to os.path.realpath: every answer, or
refusal, must be the one realpath alone gives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_server.core.errors import ToolError
from lsp_server.fs.workspace import Workspace

PARTS = ["a", "b", "f.txt", "in", "out", "dangling", "loop", "missing", "..", ".", ""]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("resolve")
    root, outside = base / "ws", base / "outside"
    (root / "a" / "b").mkdir(parents=True)
    outside.mkdir()
    (root / "f.txt").write_text("x")
    (root / "a" / "f.txt").write_text("x")
    (outside / "f.txt").write_text("x")
    os.symlink("a", root / "in")  # a symlink that stays inside
    os.symlink("b", root / "a" / "in")
    os.symlink(outside, root / "out")
    os.symlink(outside, root / "a" / "out")
    os.symlink(root / "missing", root / "dangling")
    os.symlink("loop", root / "loop")
    os.symlink("../loop", root / "a" / "loop")
    return root


def outcome(workspace: Workspace, raw: str, access: str) -> object:
    try:
        return workspace.resolve(raw, access)  # type: ignore[arg-type]
    except ToolError as exc:
        return exc.code, exc.message


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    parts=st.lists(st.sampled_from(PARTS), min_size=1, max_size=5),
    absolute=st.booleans(),
    trailing=st.booleans(),
    access=st.sampled_from(["read", "write"]),
)
def test_the_walk_below_the_root_answers_as_realpath(
    tree: Path, parts: list[str], absolute: bool, trailing: bool, access: str
) -> None:
    raw = "/".join(parts) + ("/" if trailing else "")
    if absolute:
        raw = f"{tree}/{raw}"
    fast = Workspace([tree])
    reference = Workspace([tree])
    reference._real_tops = []  # no root to walk from: os.path.realpath for every path
    assert outcome(fast, raw, access) == outcome(reference, raw, access)


def test_a_symlink_swapped_in_below_the_root_is_seen(tmp_path: Path) -> None:
    """The walk does not remember: a folder replaced by a symlink to the outside between
    two calls is resolved (and refused) on the second."""
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (root / "a").mkdir(parents=True)
    outside.mkdir()
    (root / "a" / "f.txt").write_text("x")
    (outside / "f.txt").write_text("x")
    workspace = Workspace([root])
    assert workspace.resolve("a/f.txt") == root.resolve() / "a" / "f.txt"
    (root / "a" / "f.txt").unlink()
    (root / "a").rmdir()
    os.symlink(outside, root / "a")
    with pytest.raises(ToolError) as refused:
        workspace.resolve("a/f.txt")
    assert refused.value.code == "workspace.outside_scope"
