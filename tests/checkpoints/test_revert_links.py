"""A revert never creates, deletes or writes outside the roots, whatever links an agent left
(the corpus of tests/checkpoints/link_corpus.py): in-process, over `toolhost/revert` from a
real `toolhost serve`, and with `toolhost revert` from the command line; a folder swapped for
a link while the revert runs; recorded names that are not plain paths."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

from lsp_server.checkpoints import revert_disk
from lsp_server.checkpoints.file_states import disk_state
from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.checkpoints.records import FileRecord
from lsp_server.checkpoints.restore import Blocked, Present, Put
from lsp_server.checkpoints.shadow.tree_changes import Entry
from lsp_server.checkpoints.windows import Listed
from lsp_server.compose import build_runtime
from lsp_server.config.tree import Config
from lsp_server.home.dirs import Dirs
from lsp_server.protocol import RevertParams, message_converter
from lsp_server.runtime.approvals.verdicts import ModeApprover
from lsp_server.runtime.dispatch import Runtime
from lsp_server.runtime.file_service import FileService
from lsp_server.runtime.reverts import revert_request
from lsp_server.runtime.sessions.observations import Observations
from tests.checkpoints.link_corpus import TRICKS
from tests.checkpoints.link_tricks import Trick, play, tree
from tests.fake_editor import EDITOR_CAPABILITIES, FakeEditor
from tests.fs.test_races import flipping
from tests.helpers import call_tool, lsp_call, lsp_session, make_runtime, text_of

pytestmark = pytest.mark.timeout(600)

BYPASS = {"policy": {"mode": "bypass"}}


def require_ok(result: Any, tool: str) -> None:
    failed = result["isError"] if isinstance(result, dict) else result.is_error
    assert not failed, f"{tool}: {text_of(result)}"
    assert tool != "bash" or "[exit code 0]" in text_of(result), text_of(result)


async def revert_in(runtime: Runtime, call_id: str) -> dict[str, Any]:
    files = FileService(runtime.workspace, Observations(), runtime.config.limits, None)
    result = await revert_request(
        runtime.services.get(Checkpoints), files, runtime.locks, RevertParams(call_id=call_id)
    )
    data: dict[str, Any] = message_converter().unstructure(result)
    return data


class InProcess:
    """The runtime the server runs, called directly; the revert as toolhost/revert does it."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    async def call(self, call_id: str, tool: str, arguments: dict[str, Any]) -> None:
        require_ok(await call_tool(self.runtime, tool, arguments, call_id=call_id), tool)

    async def revert(self, call_id: str) -> dict[str, Any]:
        return await revert_in(self.runtime, call_id)


@pytest.mark.slow
@pytest.mark.parametrize("trick", TRICKS, ids=[t.name for t in TRICKS])
async def test_a_revert_after_a_link_trick_stays_inside(trick: Trick, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    await play(trick, InProcess(make_runtime(root)), root, "", tmp_path / "outside")


def test_the_corpus_has_twenty_tricks_at_least() -> None:
    assert len(TRICKS) >= 20


# -- over toolhost/revert, and toolhost revert --------------------------------------------


class OverLsp:
    def __init__(self, client: Any) -> None:
        self.client = client

    async def call(self, call_id: str, tool: str, arguments: dict[str, Any]) -> None:
        require_ok(await lsp_call(self.client, tool, arguments, callId=call_id), tool)

    async def revert(self, call_id: str) -> dict[str, Any]:
        result: dict[str, Any] = await self.client.protocol.send_request_async(
            "toolhost/revert", {"callId": call_id}
        )
        return result


@pytest.mark.slow
async def test_the_corpus_over_toolhost_revert(tmp_path: Path) -> None:
    """One `toolhost serve` plays every trick, each in a folder of its own."""
    root = tmp_path / "ws"
    root.mkdir()
    async with lsp_session(root, BYPASS) as client:
        face = OverLsp(client)
        for number, trick in enumerate(TRICKS):
            await play(trick, face, root, f"t{number}", tmp_path / f"outside-{number}")


class FromTheShell:
    """The agent's calls in-process, with the state folder `toolhost revert` reads (the
    one TOOLHOST_STATE_DIR names); each revert is `toolhost revert --json`, a subprocess."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.runtime, self.lifecycle = build_runtime(
            [root],
            Config(),
            dirs=Dirs.from_environment(),
            approver=ModeApprover("bypass", "deny"),
            long_lived=False,
        )

    async def call(self, call_id: str, tool: str, arguments: dict[str, Any]) -> None:
        require_ok(await call_tool(self.runtime, tool, arguments, call_id=call_id), tool)

    async def revert(self, call_id: str) -> dict[str, Any]:
        await self.runtime.services.get(Checkpoints).settle()  # journaled writes recorded
        done = toolhost("revert", call_id, "--root", str(self.root), "--json")
        assert done.returncode in (0, 1), done.stderr
        result: dict[str, Any] = json.loads(done.stdout)
        assert (done.returncode == 1) == bool(result["conflicts"])
        return result


@pytest.mark.slow
async def test_the_corpus_with_toolhost_revert_from_the_shell(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    face = FromTheShell(root)
    try:
        for number, trick in enumerate(TRICKS):
            await play(trick, face, root, f"t{number}", tmp_path / f"outside-{number}")
    finally:
        await face.lifecycle.shutdown()


@pytest.mark.slow
def test_the_shell_prints_why_a_path_was_not_reverted(tmp_path: Path) -> None:
    """What a person reads: the path and what is in the way; exit status 1."""
    root = tmp_path / "ws"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    for command in ("mkdir d1 && echo evil > d1/evil.desktop", "rm d1/evil.desktop"):
        made = toolhost("call", "bash", json.dumps({"command": command}), "--root", str(root))
        assert made.returncode == 0, made.stderr + made.stdout
    listed = json.loads(toolhost("checkpoints", "--root", str(root), "--json").stdout)
    newest = listed["checkpoints"][0]["callId"]
    (root / "d1").rmdir()
    (root / "d1").symlink_to(outside)
    reverted = toolhost("revert", newest, "--root", str(root))
    assert reverted.returncode == 1, reverted.stderr
    assert "Reverted 0 file(s)" in reverted.stdout
    assert (
        f"d1/evil.desktop: the folder d1 is a symbolic link (to {outside}): "
        "a revert does not follow links" in reverted.stdout
    )
    assert list(outside.iterdir()) == []


def toolhost(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsp_server", *args], capture_output=True, text=True, check=False
    )


# -- a folder swapped for a link while the revert runs ------------------------------------

FILES = 40


async def test_a_folder_swapped_for_a_link_while_the_revert_runs(tmp_path: Path) -> None:
    """`d` and a link to the outside folder trade names every 0.5 ms (as in
    tests/fs/test_races.py) while reverts bring back, remove and rewrite files in `d`: a
    revert that followed the link once would create a*, delete b* or overwrite c* outside,
    whose contents equal what the revert looks for."""
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (root / "d").mkdir(parents=True)
    outside.mkdir()
    for i in range(FILES):
        for name in (f"a{i}.txt", f"b{i}.txt", f"c{i}.txt"):
            (root / "d" / name).write_text(f"{name}\n")
        (outside / f"b{i}.txt").write_text(f"b{i}.txt\n")
        (outside / f"c{i}.txt").write_text("changed\n")
    (root / "d_link").symlink_to(outside)
    runtime = make_runtime(root)
    command = 'rm d/a* d/b* && for f in d/c*; do echo changed > "$f"; done'
    await InProcess(runtime).call("c-1", "bash", {"command": command})
    before = tree(outside)
    target, reverted, refused = "c-1", 0, 0
    with flipping(root / "d", root / "d_link") as flips:
        for rounds in range(1, 31):
            swaps = flips.count()
            outcome = await revert_in(runtime, target)
            flips.calls += 1
            flips.windows_with_swaps += flips.count() > swaps
            reverted += len(outcome["reverted"])
            refused += len(outcome["conflicts"])
            assert all(c["reason"] for c in outcome["conflicts"]), outcome
            target = outcome["checkpoint"] or target  # nothing reverted: the same again
            if reverted and refused and rounds >= 4:
                break
    assert tree(outside) == before
    assert reverted > 0 and refused > 0, (reverted, refused)
    # What was reverted went to the real folder, whatever its name was at that moment.
    for path in (root / "d").iterdir():
        assert path.read_text() in (f"{path.name}\n", "changed\n"), path


# -- recorded names that are not plain paths ----------------------------------------------


@pytest.mark.parametrize("rel", ["../x", "/etc/passwd", "a//b", "./a", "a/..", "", "a\0b"])
def test_a_recorded_name_must_be_a_plain_path(rel: str) -> None:
    assert revert_disk.plain_parts(rel) is None


def test_a_put_outside_by_its_name_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for rel in ("../escape.txt", str(tmp_path / "absolute.txt")):
        why = revert_disk.apply(root, Put(rel, b"x\n"), 1 << 20)
        assert why is not None and "not a plain path inside the root" in why
        state = revert_disk.read_state(root, rel, 1 << 20)
        assert isinstance(state, Blocked)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ws"]


async def test_a_crafted_record_outside_the_root_is_a_conflict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record naming `../outside/same.txt` or an absolute path (a tampered journal):
    the files there hold exactly what the record says the call created, and stay."""
    root, outside = tmp_path / "ws", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "same.txt").write_text("same\n")
    runtime = make_runtime(root)
    await InProcess(runtime).call("c-1", "bash", {"command": "echo same > same.txt"})
    checkpoints = runtime.services.get(Checkpoints)
    [listed] = await checkpoints.find("c-1")
    made = Entry(Present.of(b"same\n", 0o100644).oid, 0o100644)
    crafted = [
        FileRecord(name, "created", None, made)
        for name in ("../outside/same.txt", str(outside / "same.txt"))
    ]
    forged = Listed(root, attrs.evolve(listed.checkpoint, files=tuple(crafted)))

    async def find(call_id: str) -> list[Listed]:
        return [forged]

    monkeypatch.setattr(checkpoints, "find", find)
    outcome = await revert_in(runtime, "c-1")
    assert outcome["reverted"] == []
    assert {c["path"] for c in outcome["conflicts"]} == {r.path for r in crafted}
    assert all("not a plain path" in c["reason"] for c in outcome["conflicts"])
    assert (outside / "same.txt").read_text() == "same\n"


# -- buffers open in the editor -----------------------------------------------------------


@pytest.mark.slow
async def test_a_buffer_under_a_folder_swapped_for_a_link_is_not_reverted(tmp_path: Path) -> None:
    """An edit made through the editor's buffer, then its folder swapped for a link to a
    folder whose file holds the same text: reverting through the editor would make it save
    the buffer through the link. The file beside it, in a plain folder, is reverted
    through the editor as before."""
    root, outside = tmp_path / "ws", tmp_path / "outside"
    for made in (root / "d1", root / "d2", outside):
        made.mkdir(parents=True)
    for path in (root / "d1" / "v2.txt", root / "d2" / "v2.txt"):
        path.write_text("v1\n")
    (outside / "v2.txt").write_text("v2\n")
    editor = FakeEditor()
    async with lsp_session(
        root,
        BYPASS,
        experimental={"saveDocument": True},
        client_factory=editor.factory,
        capabilities=EDITOR_CAPABILITIES,
    ):
        face = OverLsp(editor.client)
        for folder in ("d1", "d2"):
            editor.open(root / folder / "v2.txt")
            await face.call(f"r-{folder}", "read_file", {"path": f"{folder}/v2.txt"})
            edit = {"path": f"{folder}/v2.txt", "old_string": "v1", "new_string": "v2"}
            await face.call(f"c-{folder}", "edit_file", edit)
        assert editor.text(root / "d1" / "v2.txt") == "v2\n"
        (root / "d1").rename(root / "d1-real")
        (root / "d1").symlink_to(outside)
        edits_before = len(editor.apply_edits)
        refused = await face.revert("c-d1")
        reverted = await face.revert("c-d2")
        buffers = editor.text(root / "d1" / "v2.txt"), editor.text(root / "d2" / "v2.txt")
    [conflict] = refused["conflicts"]
    assert (
        conflict["path"] == "d1/v2.txt" and "the folder d1 is a symbolic link" in conflict["reason"]
    )
    assert reverted["reverted"] == ["d2/v2.txt"] and reverted["conflicts"] == []
    assert len(editor.apply_edits) == edits_before + 1  # d2's revert only
    assert buffers == ("v2\n", "v1\n")
    assert (outside / "v2.txt").read_text() == "v2\n"
    assert sorted(p.name for p in outside.iterdir()) == ["v2.txt"]


def test_a_writers_checkpoint_records_nothing_a_link_leads_to(tmp_path: Path) -> None:
    """A folder swapped for a link between a write and its checkpoint: the record says the
    path holds nothing, never the outside file's bytes (which a revert would put back)."""
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (root / "d2").mkdir(parents=True)
    outside.mkdir()
    (outside / "x.txt").write_text("outside\n")
    (root / "d2" / "x.txt").write_text("inside\n")
    (root / "d1").symlink_to(outside)
    assert disk_state(root / "d1" / "x.txt", 1 << 20, root=root) is None
    assert disk_state(root / "d2" / "x.txt", 1 << 20, root=root) == Present.of(
        b"inside\n", 0o100644
    )
