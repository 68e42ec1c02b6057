"""move_file's refusals say how to do what was meant."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import call_tool, make_runtime, text_of


async def test_a_folder_as_destination_names_the_path_inside_it(tmp_path: Path) -> None:
    """`mv a.txt sub` moves into the folder; move_file takes the new path, and says which
    one to pass (it said "sub already exists; choose a destination that is free")."""
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "sub").mkdir()
    runtime = make_runtime(tmp_path)
    await call_tool(runtime, "read_file", {"path": "a.txt"})
    moving = {"source_path": "a.txt", "destination_path": "sub"}
    refused = await call_tool(runtime, "move_file", moving)
    assert refused.error is not None and refused.error.code == "FS_ALREADY_EXISTS"
    assert 'pass destination_path "sub/a.txt"' in text_of(refused), text_of(refused)
    moving["destination_path"] = "sub/a.txt"
    moved = await call_tool(runtime, "move_file", moving)
    assert not moved.is_error, text_of(moved)
    assert (tmp_path / "sub" / "a.txt").read_text() == "alpha\n"
