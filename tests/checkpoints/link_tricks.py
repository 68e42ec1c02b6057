"""A corpus of link tricks an injected agent can play before the user reverts one of its calls.

Each trick is a sequence of agent steps, each of which runs unasked: real tool calls (bash in
the sandbox where it runs, write_file, edit_file, move_file) and direct file operations
between calls (what a command of the agent could do as well, e.g. python's os.symlink),
then one or more reverts. Whatever the revert meets, it must not create, delete or change
anything outside the root (a folder outside, compared with contents, modes and link
targets, and names probed at `/`), and it must name every path it refused as a conflict.

A trick is played in a folder of its own (`base`, "" for a root of its own) so that one
server can play the whole corpus; `{out}` in a command is the trick's outside folder.
"""

from __future__ import annotations

import hashlib
import os
import stat
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

import attrs

# Names probed at `/` (a folder linked to `/` or `/proc/self/root`): unique to this run, so
# the probe never meets a real file, and nothing real is at risk if a revert followed it.
PROBE = f"toolhost-revert-probe-{uuid.uuid4().hex[:12]}.desktop"


@attrs.frozen
class Call:
    call_id: str
    tool: str
    arguments: dict[str, Any]


@attrs.frozen
class Act:
    """A file operation between calls: `do(folder, outside)`."""

    do: Callable[[Path, Path], None]


@attrs.frozen
class Revert:
    """Revert `call_id` ("@last": the checkpoint the previous revert made); `refused` are
    the paths it must name as conflicts, each reason holding `reason` (`{prefix}`: the
    trick's folder)."""

    call_id: str
    refused: tuple[str, ...] = ()
    reason: str = ""
    reverted: tuple[str, ...] | None = None


Step = Call | Act | Revert


@attrs.frozen
class Trick:
    name: str
    steps: tuple[Step, ...]


class Face(Protocol):
    """How a trick reaches toolhost: its calls, and the revert the user runs."""

    def call(self, call_id: str, tool: str, arguments: dict[str, Any]) -> Awaitable[None]: ...

    def revert(self, call_id: str) -> Awaitable[dict[str, Any]]: ...


# -- what must not change -----------------------------------------------------------------


def make_outside(outside: Path) -> None:
    """Files a revert that followed a link would create next to, delete or overwrite: their
    contents equal what the calls leave, so only a link check can tell them apart."""
    (outside / "b").mkdir(parents=True)
    for name, text, mode in (
        ("same.txt", "same\n", 0o640),
        ("v1.txt", "v1\n", 0o600),
        ("v2.txt", "v2\n", 0o644),
        ("b/same.txt", "same\n", 0o755),
    ):
        (outside / name).write_text(text)
        (outside / name).chmod(mode)
    (outside / "link").symlink_to("same.txt")


def tree(folder: Path) -> dict[str, tuple[str, int]]:
    """Every entry below `folder`: kind and content (file bytes, link target), mode."""
    found: dict[str, tuple[str, int]] = {}
    for where, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(where) / name
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                what = "link:" + os.readlink(path)
            elif stat.S_ISREG(st.st_mode):
                what = "file:" + hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                what = f"kind:{stat.S_IFMT(st.st_mode):o}"
            found[path.relative_to(folder).as_posix()] = (what, stat.S_IMODE(st.st_mode))
    return found


def probes() -> list[Path]:
    return [Path("/") / PROBE, Path("/proc/self/root") / PROBE]


# -- playing a trick ----------------------------------------------------------------------


async def play(trick: Trick, face: Face, root: Path, base: str, outside: Path) -> None:
    folder = root / base if base else root
    folder.mkdir(parents=True, exist_ok=True)
    make_outside(outside)
    before = tree(outside)
    last: str | None = None
    prefix = f"{base}/" if base else ""
    for step in trick.steps:
        if isinstance(step, Call):
            ids = f"{base}-{step.call_id}" if base else step.call_id
            await face.call(ids, step.tool, _arguments(step, base, outside))
        elif isinstance(step, Act):
            step.do(folder, outside)
        else:
            target = last if step.call_id == "@last" else step.call_id
            assert target is not None, "no revert before to revert"
            if step.call_id != "@last" and base:
                target = f"{base}-{target}"
            outcome = await face.revert(target)
            _check(trick, step, outcome, prefix)
            last = outcome.get("checkpoint")
    assert tree(outside) == before, f"{trick.name}: the outside folder changed"
    for probe in probes():
        assert not probe.exists(), f"{trick.name}: {probe} was created"


def _arguments(step: Call, base: str, outside: Path) -> dict[str, Any]:
    arguments = dict(step.arguments)
    if "command" in arguments:
        command = arguments["command"].replace("{out}", str(outside))
        # In a subshell: the bash tool keeps the working folder a command moves to.
        arguments["command"] = f"(cd {base} && {command})" if base else command
    for key in ("path", "source_path", "destination_path"):
        if key in arguments and base:
            arguments[key] = f"{base}/{arguments[key]}"
    return arguments


def _check(trick: Trick, step: Revert, outcome: dict[str, Any], prefix: str) -> None:
    conflicts = {c["path"]: c["reason"] for c in outcome["conflicts"]}
    assert set(conflicts) == {prefix + rel for rel in step.refused}, f"{trick.name}: {outcome}"
    for rel in step.refused:
        assert prefix + rel in conflicts, f"{trick.name}: {rel} not named: {outcome}"
        reason = step.reason.format(prefix=prefix)
        assert reason in conflicts[prefix + rel], f"{trick.name}: {conflicts}"
        assert prefix + rel not in outcome["reverted"], f"{trick.name}: {outcome}"
    if step.reverted is not None:
        assert sorted(outcome["reverted"]) == sorted(prefix + r for r in step.reverted), (
            f"{trick.name}: {outcome}"
        )
