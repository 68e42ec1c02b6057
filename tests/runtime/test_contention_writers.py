"""Lost updates, per writer (issue 27): 50 sessions each change their own part of one file
with edit_file, multi_edit, delete_range or notebook_edit, or move it about with
move_file while others edit it.

The sessions are spread over two `toolhost serve` processes on the same folder: within one
server the per-file mutation lock already serialises the writers, so only a writer the
lock does not see (another server, an editor, a build) makes the final check -- the
observed content compared with the file at the rename -- the one thing that stands
between a stale edit and a lost update. Two servers make that check carry the test.

Each session reads the file, runs its writer on its own line (or cell) and, on
FS_STALE_VERSION, reads again and retries. Afterwards every write that reported success
must still be there: a success that a later write of someone else silently undid shows
as a count short, a deleted line back, or (for the session itself) its next edit failing
with edit.not_found. test_contention.py does the same for write_file.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from tests.helpers import lsp_call, lsp_session, text_of

pytestmark = pytest.mark.slow

SESSIONS = int(os.environ.get("TOOLHOST_CONTENTION_SESSIONS", "50"))
ROUNDS = int(os.environ.get("TOOLHOST_CONTENTION_ROUNDS", "1"))
LINE = re.compile(r"^\s*\d+→(.*)$")

Call = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


def name(session: int) -> str:
    return f"s{session:02d}"


def lines_of(read_text: str) -> list[str]:
    return [m.group(1) for m in map(LINE.match, read_text.splitlines()) if m]


def caller(client: LanguageClient, session: int) -> Call:
    async def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await lsp_call(client, tool, arguments, session=name(session))

    return call


def refused_stale(result: dict[str, Any]) -> bool:
    """A stale version (retry after a read); any other refusal fails the test."""
    if not result["isError"]:
        return False
    assert result["error"]["code"] == "FS_STALE_VERSION", text_of(result)
    return True


async def edit_rounds(call: Call, me: str, path: str, multi: bool) -> int:
    done = 0
    while done < ROUNDS:
        read = await call("read_file", {"path": path})
        assert not read["isError"], text_of(read)
        old, new = f"{me} = {done}", f"{me} = {done + 1}"
        assert old in lines_of(text_of(read)), f"{me}: a successful edit was lost"
        edit = {"old_string": old, "new_string": new}
        arguments = {"path": path, "edits": [edit]} if multi else {"path": path, **edit}
        if not refused_stale(await call("multi_edit" if multi else "edit_file", arguments)):
            done += 1
    return done


async def delete_rounds(call: Call, me: str, path: str) -> int:
    done = 0
    while done < ROUNDS:
        read = await call("read_file", {"path": path})
        assert not read["isError"], text_of(read)
        lines = lines_of(text_of(read))
        assert f"{me} del {done - 1}" not in lines, f"{me}: a deleted line came back"
        anchor = f"{me} del {done}"
        arguments = {"path": path, "start_anchor": anchor, "end_anchor": anchor}
        if not refused_stale(await call("delete_range", arguments)):
            done += 1
    return done


async def notebook_rounds(call: Call, me: str, path: str, cell: int) -> int:
    done = 0
    while done < ROUNDS:
        read = await call("read_file", {"path": path})
        assert not read["isError"], text_of(read)
        assert f"{me} = {done}" in text_of(read), f"{me}: a successful cell edit was lost"
        arguments = {"path": path, "cell_number": cell, "new_source": f"{me} = {done + 1}"}
        if not refused_stale(await call("notebook_edit", arguments)):
            done += 1
    return done


# A move links the new name, then unlinks the old: in between, the file has two names and
# a read that counts them mid-move may find one (the hard-link rule then refuses it).
MID_MOVE = ("FS_NOT_FOUND", "workspace.outside_scope")


async def find_and_read(call: Call) -> tuple[str, dict[str, Any]]:
    """The file moves between a.txt and b.txt: read it wherever it is now."""
    while True:
        for path in ("a.txt", "b.txt"):
            read = await call("read_file", {"path": path})
            if not read["isError"]:
                return path, read
            assert read["error"]["code"] in MID_MOVE, text_of(read)


async def mover_rounds(call: Call) -> int:
    done = 0
    while done < ROUNDS:
        path, _ = await find_and_read(call)
        other = "b.txt" if path == "a.txt" else "a.txt"
        moved = await call("move_file", {"source_path": path, "destination_path": other})
        if not moved["isError"]:
            done += 1
        else:
            assert moved["error"]["code"] in (
                "FS_STALE_VERSION",
                "FS_ALREADY_EXISTS",
                *MID_MOVE,
            ), text_of(moved)
    return done


async def moved_edit_rounds(call: Call, me: str) -> int:
    done = 0
    while done < ROUNDS:
        path, read = await find_and_read(call)
        old, new = f"{me} = {done}", f"{me} = {done + 1}"
        assert old in lines_of(text_of(read)), f"{me}: a successful edit was lost"
        result = await call("edit_file", {"path": path, "old_string": old, "new_string": new})
        if not result["isError"]:
            done += 1
        else:
            assert result["error"]["code"] in ("FS_STALE_VERSION", *MID_MOVE), text_of(result)
    return done


def _notebook(cells: int) -> str:
    return json.dumps(
        {
            "cells": [
                {
                    "cell_type": "code",
                    "execution_count": None,
                    "id": f"c{i}",
                    "metadata": {},
                    "outputs": [],
                    "source": [f"{name(i)} = 0"],
                }
                for i in range(cells)
            ],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        },
        indent=1,
    )


@pytest.mark.parametrize(
    "writer", ["edit_file", "multi_edit", "delete_range", "notebook_edit", "move_file"]
)
async def test_no_lost_updates(writer: str, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    shared = root / ("shared.ipynb" if writer == "notebook_edit" else "shared.txt")
    if writer == "delete_range":
        body = "".join(
            f"{name(i)} keep\n" + "".join(f"{name(i)} del {r}\n" for r in range(ROUNDS))
            for i in range(SESSIONS)
        )
        shared.write_text(body)
    elif writer == "notebook_edit":
        shared.write_text(_notebook(SESSIONS))
    else:
        shared = root / ("a.txt" if writer == "move_file" else "shared.txt")
        shared.write_text("".join(f"{name(i)} = 0\n" for i in range(SESSIONS)))
    options = {"policy": {"mode": "bypass"}}
    async with (
        lsp_session(root, options, state_dir=tmp_path / "state-a") as first,
        lsp_session(root, options, state_dir=tmp_path / "state-b") as second,
    ):
        calls = [caller(second if i % 4 >= 2 else first, i) for i in range(SESSIONS)]
        rel = shared.name
        if writer in ("edit_file", "multi_edit"):
            work = [
                edit_rounds(c, name(i), rel, writer == "multi_edit") for i, c in enumerate(calls)
            ]
        elif writer == "delete_range":
            work = [delete_rounds(c, name(i), rel) for i, c in enumerate(calls)]
        elif writer == "notebook_edit":
            work = [notebook_rounds(c, name(i), rel, i) for i, c in enumerate(calls)]
        else:  # half the sessions edit their line, half move the file about
            work = [
                mover_rounds(c) if i % 2 else moved_edit_rounds(c, name(i))
                for i, c in enumerate(calls)
            ]
        done = await asyncio.gather(*work)
    assert done == [ROUNDS] * SESSIONS
    if writer == "delete_range":
        assert shared.read_text() == "".join(f"{name(i)} keep\n" for i in range(SESSIONS))
    elif writer == "notebook_edit":
        cells = json.loads(shared.read_text())["cells"]
        assert ["".join(c["source"]) for c in cells] == [
            f"{name(i)} = {ROUNDS}" for i in range(SESSIONS)
        ]
    else:
        final = next(p for p in (root / "a.txt", root / "b.txt", shared) if p.exists())
        expected = {
            name(i): str(ROUNDS if writer != "move_file" or i % 2 == 0 else 0)
            for i in range(SESSIONS)
        }
        assert dict(line.split(" = ") for line in final.read_text().splitlines()) == expected
