"""Twenty sessions, one file: each changes its own line of `shared.txt` 7 times with
edit_file (read once, edit, and only on a refusal read again and retry), on one real
`toolhost serve` and on two servers on one folder. Edits of other lines merge, so all 140
land, none is lost and no edit needs more than a few tries; an edit of another session's
line is refused naming that session."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from tests.helpers import lsp_call, lsp_session, text_of

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SESSIONS = 20
ROUNDS = 7
MAX_TRIES = 3
BYPASS = {"policy": {"mode": "bypass"}}


def name(session: int) -> str:
    return f"s{session:02d}"


async def one_session(client: LanguageClient, session: int) -> list[int]:
    """The tries each of the session's edits took."""
    me = name(session)
    tries: list[int] = []
    read = await lsp_call(client, "read_file", {"path": "shared.txt"}, session=me)
    assert not read["isError"], text_of(read)
    for value in range(ROUNDS):
        edit = {"path": "shared.txt", "old_string": f"{me} = {value}\n"}
        edit["new_string"] = f"{me} = {value + 1}\n"
        for attempt in range(1, 20):
            result = await lsp_call(client, "edit_file", edit, session=me)
            if not result["isError"]:
                tries.append(attempt)
                break
            code = result["error"]["code"]
            assert code in ("FS_STALE_VERSION", "FS_EDIT_CONFLICT"), text_of(result)
            await lsp_call(client, "read_file", {"path": "shared.txt"}, session=me)
        else:
            raise AssertionError(f"{me} gave up on edit {value + 1}")
    return tries


def check(root: Path, outcomes: Sequence[list[int]]) -> None:
    final = dict(line.split(" = ") for line in (root / "shared.txt").read_text().splitlines())
    assert final == {name(i): str(ROUNDS) for i in range(SESSIONS)}  # all 140 landed
    worst = max(max(tries) for tries in outcomes)
    assert all(len(tries) == ROUNDS for tries in outcomes)
    assert worst <= MAX_TRIES, f"an edit took {worst} tries"


def shared(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "shared.txt").write_text("".join(f"{name(i)} = 0\n" for i in range(SESSIONS)))
    return root


async def test_twenty_sessions_on_one_server_land_every_edit(tmp_path: Path) -> None:
    root = shared(tmp_path)
    async with lsp_session(root, BYPASS) as client:
        outcomes = await asyncio.gather(*(one_session(client, i) for i in range(SESSIONS)))
        # An edit of another session's line since the read is refused, naming it.
        await lsp_call(client, "read_file", {"path": "shared.txt"}, session="late")
        await lsp_call(
            client,
            "edit_file",
            {"path": "shared.txt", "old_string": "s05 = 7\n", "new_string": "s05 = 8\n"},
            session="s05",
        )
        clash = await lsp_call(
            client,
            "edit_file",
            {"path": "shared.txt", "old_string": "s05 = 7\n", "new_string": "s05 = 0\n"},
            session="late",
        )
    assert clash["isError"] and clash["error"]["code"] == "FS_EDIT_CONFLICT", text_of(clash)
    assert "line 6, by session s05 (edit_file" in text_of(clash)
    (root / "shared.txt").write_text(
        (root / "shared.txt").read_text().replace("s05 = 8\n", "s05 = 7\n")
    )
    check(root, outcomes)


async def test_twenty_sessions_on_two_servers_on_one_folder(tmp_path: Path) -> None:
    root = shared(tmp_path)
    async with lsp_session(root, BYPASS) as first, lsp_session(root, BYPASS) as second:
        outcomes = await asyncio.gather(
            *(one_session(first if i % 2 else second, i) for i in range(SESSIONS))
        )
        # The other server's writes are named too (the activity log is the root's).
        await lsp_call(first, "read_file", {"path": "shared.txt"}, session="late")
        await lsp_call(
            second,
            "edit_file",
            {"path": "shared.txt", "old_string": "s04 = 7\n", "new_string": "s04 = 8\n"},
            session="s04",
        )
        clash = await lsp_call(
            first,
            "edit_file",
            {"path": "shared.txt", "old_string": "s04 = 7\n", "new_string": "s04 = 0\n"},
            session="late",
        )
    assert clash["isError"] and clash["error"]["code"] == "FS_EDIT_CONFLICT", text_of(clash)
    assert "line 5, by session s04 (edit_file" in text_of(clash)
    (root / "shared.txt").write_text(
        (root / "shared.txt").read_text().replace("s04 = 8\n", "s04 = 7\n")
    )
    check(root, outcomes)
