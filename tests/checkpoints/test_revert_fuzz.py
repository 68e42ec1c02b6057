"""Random sequences of agent steps, with reverts of random calls (and of reverts) among them:
no revert ever creates, deletes or changes anything outside the root.

Each step is what an injected agent does unasked: a bash command in the sandbox (write,
delete, remove a folder, put a link to the outside folder, to `/` or `/proc/self/root` where
a folder or file was, a FIFO) or, for a hard link to an outside file (which the sandbox
cannot see), a file operation between calls. The names and contents are few, and the
outside folder holds the same names with the same contents, so a revert that followed a
link would find there exactly what it looks for. Seeded: a failure replays."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest

from lsp_server.core.errors import CHECKPOINT_UNKNOWN, ToolError
from lsp_server.sandbox.platforms import find_backend
from tests.checkpoints.link_tricks import PROBE, make_outside, tree
from tests.checkpoints.test_revert_links import InProcess, revert_in
from tests.conftest import missing_part
from tests.helpers import call_tool, make_runtime

pytestmark = [pytest.mark.timeout(900), pytest.mark.slow]

STEPS = 150
FILES = (f"{PROBE}-f", f"{PROBE}-g")
FOLDERS = ("d1", "d2", "d1/e")
TEXTS = ("same", "v1", "v2")


def outside_twin(outside: Path) -> None:
    """The names the root uses, with contents a step may write, outside."""
    make_outside(outside)
    for folder in ("", *FOLDERS):
        (outside / folder).mkdir(parents=True, exist_ok=True)
        for number, name in enumerate(FILES):
            (outside / folder / name).write_text(f"{TEXTS[number]}\n")


def a_step(rng: random.Random, outside: Path) -> str:
    folder = rng.choice(FOLDERS)
    file = f"{folder}/{rng.choice(FILES)}"
    target = rng.choice((str(outside), str(outside / "d1"), "/", "/proc/self/root"))
    return rng.choice(
        (
            # rm -f first: writing into a FIFO an earlier step made would wait forever.
            f"mkdir -p {folder} && rm -f {file}; echo {rng.choice(TEXTS)} > {file}",
            f"mkdir -p {folder} && rm -f {file}; echo {rng.choice(TEXTS)} > {file}",
            f"rm -f {file}",
            f"rm -rf {folder}",
            f"rm -rf {folder} && ln -s {target} {folder}",
            f"rm -rf {folder} && ln -s {target} {folder}",
            f"rm -rf {file}; ln -s {outside / 'same.txt'} {file}",
            f"rm -rf {file}; mkfifo {file}",
            f"rm -f {FILES[0]}; echo {rng.choice(TEXTS)} > {FILES[0]}",
        )
    )


def hard_link_step(rng: random.Random, root: Path, outside: Path) -> None:
    folder = rng.choice(FOLDERS)
    name = rng.choice(FILES)
    where = root / folder
    # Only in a real folder of the root: the step itself must not follow a link outside.
    if where.is_dir() and os.path.realpath(where) == str(where):
        path = where / name
        if path.is_symlink() or path.exists():
            path.unlink()
        os.link(outside / folder / name, path)


@pytest.mark.parametrize("seed", range(1, 7))
async def test_random_agent_steps_then_reverts_stay_inside(seed: int, tmp_path: Path) -> None:
    # The steps write where earlier ones put links: only the sandbox keeps the agent's own
    # writes from following them (/ is read-only there); reverts are what is tested.
    problem = find_backend(os.environ.get("PATH")).problem
    if problem is not None:
        missing_part(problem)
    rng = random.Random(seed)
    root, outside = tmp_path / "ws", tmp_path / "outside"
    root.mkdir()
    outside_twin(outside)
    before = tree(outside)
    face = InProcess(make_runtime(root))
    calls: list[str] = []
    outcomes: list[dict[str, Any]] = []
    for number in range(STEPS):
        roll = rng.random()
        if roll < 0.35 and calls:
            # Mostly a recent call: what the steps since did to its paths is the trick.
            recent = calls[-4:] if rng.random() < 0.7 else calls
            outcome = await _revert(face, rng.choice(recent))
            if outcome is not None:
                outcomes.append(outcome)
                if outcome["checkpoint"]:
                    calls.append(outcome["checkpoint"])
        elif roll < 0.42:
            hard_link_step(rng, root, outside)
        else:
            call_id = f"c{number}"
            command = a_step(rng, outside)
            # Steps may fail (a folder that is a link, a FIFO in the way): that is fine.
            await _bash(face, call_id, command)
            calls.append(call_id)
        assert tree(outside) == before, f"seed {seed}, step {number}"
        for probe in (Path("/") / name for name in FILES):
            assert not probe.exists(), f"seed {seed}, step {number}: {probe}"
    assert outcomes, "no revert ran"
    for outcome in outcomes:
        assert all(c["reason"] for c in outcome["conflicts"]), outcome


async def _bash(face: InProcess, call_id: str, command: str) -> None:
    result = await call_tool(face.runtime, "bash", {"command": command}, call_id=call_id)
    assert result.error is None or result.error.code != "internal_error", result


async def _revert(face: InProcess, call_id: str) -> dict[str, Any] | None:
    try:
        return await revert_in(face.runtime, call_id)
    except ToolError as exc:  # a call that changed nothing has no checkpoint
        assert exc.code == CHECKPOINT_UNKNOWN, exc
        return None
