"""Reading beneath a root (fs/beneath.py), both ways it is done: one openat2 from
the root where the kernel has it, and folder by folder where it does not. Either way a
symlink on the way or at the end is refused, never followed."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_server.core.errors import FS_NOT_A_FILE, FS_NOT_FOUND, OUTSIDE_SCOPE, ToolError
from lsp_server.fs import beneath


@pytest.fixture(params=["openat2", "folder by folder"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "openat2":
        if not beneath._openat2_works():
            pytest.fail("this kernel refuses openat2: the fast way cannot be checked here")
    else:
        monkeypatch.setattr(beneath, "_openat2_works", lambda: False)
    return str(request.param)


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "ws"
    (root / "src" / "deep").mkdir(parents=True)
    (root / "src" / "deep" / "a.txt").write_text("inside\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.txt").write_text("secret\n")
    return root, outside


def test_a_file_in_a_folder_is_read(way: str, tree: tuple[Path, Path]) -> None:
    root, _ = tree
    path = root / "src" / "deep" / "a.txt"
    st, data = beneath.read_regular(root, path, "src/deep/a.txt", 1 << 20)
    assert data == b"inside\n" and st.st_size == 7


def test_a_folder_swapped_for_a_symlink_is_refused(way: str, tree: tuple[Path, Path]) -> None:
    root, outside = tree
    (root / "src" / "deep" / "a.txt").unlink()
    (root / "src" / "deep").rmdir()
    (root / "src" / "deep").symlink_to(outside)
    with pytest.raises(ToolError) as refused:
        beneath.read_regular(root, root / "src" / "deep" / "a.txt", "src/deep/a.txt", 1 << 20)
    assert refused.value.code == OUTSIDE_SCOPE and "replaced by a symlink" in refused.value.message


def test_a_symlink_at_the_end_is_refused(way: str, tree: tuple[Path, Path]) -> None:
    root, outside = tree
    link = root / "src" / "link.txt"
    link.symlink_to(outside / "a.txt")
    with pytest.raises(ToolError) as refused:
        beneath.read_regular(root, link, "src/link.txt", 1 << 20)
    assert refused.value.code == OUTSIDE_SCOPE


def test_missing_and_the_root_itself(way: str, tree: tuple[Path, Path]) -> None:
    root, _ = tree
    with pytest.raises(ToolError) as missing:
        beneath.read_regular(root, root / "src" / "nope" / "a.txt", "src/nope/a.txt", 1 << 20)
    assert missing.value.code == FS_NOT_FOUND
    with pytest.raises(ToolError) as through_a_file:
        beneath.read_regular(root, root / "src" / "deep" / "a.txt" / "x", "a.txt/x", 1 << 20)
    assert through_a_file.value.code == FS_NOT_FOUND
    with pytest.raises(ToolError) as at_root:
        beneath.read_regular(root, root, ".", 1 << 20)
    assert at_root.value.code == FS_NOT_A_FILE
