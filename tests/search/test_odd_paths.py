"""Odd names and explicit secret paths, through the real runtime, for both engines."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers import call_tool, make_runtime, text_of


@pytest.fixture
def odd_tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    raw = os.fsencode(root)
    os.mkdir(raw + b"/dir\xff")
    with open(raw + b"/dir\xff/caf\xe9.txt", "wb") as handle:
        handle.write(b"hello caf\xe9\n")
    (root / "line\nbreak.txt").write_text("hello nl\n")
    (root / "loop").symlink_to(root)  # never followed
    (root / ".env").write_text("hello\n")
    (root / "keys").mkdir()
    (root / "keys" / "deploy.pem").write_text("hello\n")
    return root


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
async def test_odd_names_are_printable_and_exact(
    odd_tree: Path, rg_path: Path, engine: str
) -> None:
    runtime = make_runtime(odd_tree, {"search": {"engine": engine}})
    expected = {
        "content": "dir\\xff/caf\\xe9.txt:1:hello caf\ufffd\nline\\nbreak.txt:1:hello nl",
        "files_with_matches": "dir\\xff/caf\\xe9.txt\nline\\nbreak.txt",
        "count": "dir\\xff/caf\\xe9.txt:1\nline\\nbreak.txt:1",
    }
    for mode, text in expected.items():
        result = await call_tool(runtime, "grep", {"pattern": "hello", "output_mode": mode})
        assert text_of(result) == text
        json.dumps(text_of(result), ensure_ascii=False).encode()  # valid UTF-8 on the wire
    listing = text_of(await call_tool(runtime, "ls", {"recursive": True}))
    assert listing.splitlines() == [
        "dir\\xff/",
        "dir\\xff/caf\\xe9.txt\t11",
        "keys/",
        "line\\nbreak.txt\t9",
        f"loop -> {odd_tree}",
    ]
    found = text_of(await call_tool(runtime, "glob", {"pattern": "**/*.txt"}))
    assert sorted(found.splitlines()) == ["dir\\xff/caf\\xe9.txt", "line\\nbreak.txt"]


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("grep", {"pattern": "hello", "path": ".env"}),
        ("grep", {"pattern": "hello", "path": "keys/deploy.pem"}),
        ("ls", {"path": ".env"}),
        ("view_image", {"path": "keys/deploy.pem"}),
    ],
)
async def test_naming_a_secret_is_refused(
    odd_tree: Path, rg_path: Path, tool: str, args: dict[str, str]
) -> None:
    result = await call_tool(make_runtime(odd_tree), tool, args)
    assert result.is_error and result.error is not None
    assert result.error.code == "workspace.secret_file"


async def test_a_secret_folder_shows_nothing(odd_tree: Path, rg_path: Path) -> None:
    (odd_tree / ".ssh").mkdir()
    (odd_tree / ".ssh" / "config").write_text("hello host\n")
    for engine in ("ripgrep", "python"):
        runtime = make_runtime(odd_tree, {"search": {"engine": engine}})
        for tool, args in [
            ("grep", {"pattern": "hello", "path": ".ssh"}),
            ("ls", {"path": ".ssh"}),
            ("glob", {"pattern": "*", "path": ".ssh"}),
        ]:
            result = await call_tool(runtime, tool, args)
            assert "config" not in text_of(result), (engine, tool)
