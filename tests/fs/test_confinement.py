"""Workspace confinement: every escape gets workspace.outside_scope, never a file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import call_tool, make_runtime, text_of


@pytest.fixture
def escape_setup(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("outside data\n")
    (root / "inside.txt").write_text("inside\n")
    os.symlink(outside / "secret.txt", root / "link_file")
    os.symlink(outside, root / "link_dir")
    os.symlink(outside / "missing.txt", root / "dangling")
    return root, outside


@pytest.mark.parametrize(
    "path",
    [
        "../outside/secret.txt",
        "link_file",
        "link_dir/secret.txt",
        "dangling",
        "~/.bashrc",
        "/etc/passwd",
        "/proc/self/root/etc/passwd",
    ],
)
async def test_readers_refuse_escapes(escape_setup: tuple[Path, Path], path: str) -> None:
    root, _ = escape_setup
    runtime = make_runtime(root)
    result = await call_tool(runtime, "read_file", {"path": path})
    assert result.error is not None and result.error.code == "workspace.outside_scope", text_of(
        result
    )
    assert "outside data" not in text_of(result)


@pytest.mark.parametrize("path", ["link_file", "dangling", "link_dir/new.txt", "../outside/x.txt"])
async def test_writers_refuse_escapes(escape_setup: tuple[Path, Path], path: str) -> None:
    root, outside = escape_setup
    runtime = make_runtime(root)
    result = await call_tool(runtime, "write_file", {"path": path, "content": "pwned\n"})
    assert result.error is not None and result.error.code == "workspace.outside_scope"
    assert (outside / "secret.txt").read_text() == "outside data\n"
    assert not (outside / "missing.txt").exists() and not (outside / "new.txt").exists()


async def test_absolute_proc_path_into_the_workspace_is_refused(
    escape_setup: tuple[Path, Path],
) -> None:
    root, _ = escape_setup
    runtime = make_runtime(root)
    result = await call_tool(runtime, "read_file", {"path": f"/proc/self/root{root}/inside.txt"})
    assert result.error is not None and result.error.code == "workspace.outside_scope"


async def test_nul_bytes_and_overlong_paths(escape_setup: tuple[Path, Path]) -> None:
    root, _ = escape_setup
    runtime = make_runtime(root)
    nul = await call_tool(runtime, "read_file", {"path": "inside.txt\x00../../etc/passwd"})
    long = await call_tool(runtime, "read_file", {"path": "a/" * 3000})
    assert nul.error is not None and nul.error.code == "invalid_argument"
    assert long.error is not None and long.error.code == "invalid_argument"


async def test_git_internals_are_read_only(escape_setup: tuple[Path, Path]) -> None:
    root, _ = escape_setup
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    runtime = make_runtime(root)
    read = await call_tool(runtime, "read_file", {"path": ".git/config"})
    write = await call_tool(
        runtime, "write_file", {"path": ".git/hooks/pre-commit", "content": "x"}
    )
    assert not read.is_error
    assert write.error is not None and write.error.code == "workspace.outside_scope"


@pytest.mark.parametrize(
    "name", [".env", ".env.local", "server.pem", "id_rsa", ".ssh/config", ".netrc"]
)
async def test_secret_files_are_refused_by_readers(tmp_path: Path, name: str) -> None:
    root = tmp_path / "ws"
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_text("TOKEN=hunter2\n")
    runtime = make_runtime(root)
    result = await call_tool(runtime, "read_file", {"path": name})
    assert result.error is not None and result.error.code == "workspace.secret_file"
    assert "hunter2" not in text_of(result)
    allowed = make_runtime(root, {"workspace": {"allowed_secrets": [name]}})
    assert not (await call_tool(allowed, "read_file", {"path": name})).is_error


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("read_file", {"path": "loop1"}),
        ("read_file", {"path": "loop1/x.txt"}),
        ("write_file", {"path": "loop1", "content": "x"}),
        ("write_file", {"path": "loop1/x.txt", "content": "x"}),
        ("edit_file", {"path": "loop1", "old_string": "a", "new_string": "b"}),
        ("grep", {"pattern": "x", "path": "loop1"}),
    ],
)
async def test_a_link_loop_is_named_as_one(
    tmp_path: Path, tool: str, arguments: dict[str, str]
) -> None:
    """Two links pointing at each other, there all along: the refusal says it is a loop
    (it said the path "was replaced by a symlink while toolhost used it", or that another
    writer had created it first, or that it was neither a file nor a folder)."""
    root = tmp_path / "ws"
    root.mkdir()
    os.symlink("loop2", root / "loop1")
    os.symlink("loop1", root / "loop2")
    result = await call_tool(make_runtime(root), tool, arguments)
    assert result.is_error
    text = text_of(result)
    assert result.error is not None and result.error.code == "invalid_argument", text
    assert "is a loop of symbolic links" in text, text
    assert os.readlink(root / "loop1") == "loop2"  # nothing was written through it
