"""workspace:apply (through use_capability): bring an isolated session's change back.

A session started with `toolhost mcp --isolate` works in a worktree (worktree.py); nothing
it runs can write the folder it came from. This capability is the one way back: every
path changed since the base is merged three-way with that folder's current file, the
merged change is shown as ONE diff and asked through the normal approval (as a writer
asks: runtime/approval_step.py), then written there atomically under a checkpoint of that
folder's own store, so `toolhost revert <call>` run there undoes it. Paths whose changes
overlap what changed there meanwhile are listed and left out, never overwritten. After an
apply the base is the worktree's tree, so the next apply brings only newer changes.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any, NamedTuple

from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.core.contract import JSON_SCHEMA_DIALECT, ContractEntry, Tool
from lsp_server.core.diffs import unified_diff
from lsp_server.core.errors import ISOLATION_BROKEN, NOT_ISOLATED, ToolError
from lsp_server.core.tool_output import ToolOutput
from lsp_server.fs.textio import atomic_write
from lsp_server.fs.workspace import Workspace
from lsp_server.runtime import approval_step
from lsp_server.runtime.approvals.verdicts import Approver
from lsp_server.runtime.context import ToolContext
from lsp_server.runtime.results.call_records import CallState
from lsp_server.runtime.sessions.activity import WorkspaceActivity
from lsp_server.tools.session import worktree
from lsp_server.tools.session.worktree import Isolation

APPLY_ID = "workspace:apply"

APPLY = ContractEntry(
    name=APPLY_ID,
    read_only=False,
    kind="edit",
    description=(
        "Isolated sessions (toolhost mcp --isolate) only: bring your changes back to the "
        "folder your worktree was made from, merged three-way with what changed there "
        "meanwhile, as one diff that the user approves; overlapping changes are listed and "
        "left out."
    ),
    schema={
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "additionalProperties": False,
        "properties": {},
    },
)


class Write(NamedTuple):
    target: Path
    rel: str  # in the repository
    theirs: bytes | None  # the folder's file when planned (None: none)
    data: bytes | None  # None: delete
    mode: int | None


class Planned:
    def __init__(self) -> None:
        self.writes: list[Write] = []
        self.diff: list[str] = []
        self.conflicts: list[str] = []
        self.kept: list[str] = []  # not applied, by their path in the repository
        self.left_out: list[str] = []
        self.moved: list[str] = []  # changed in the folder while the apply was asked


def _read(path: Path) -> bytes | None:
    try:
        if path.is_symlink() or not path.is_file():
            return None
        return path.read_bytes()
    except OSError:
        return None


def _inside(source: Path, target: Path) -> bool:
    """`target`'s folder is inside `source` after links (a link cannot lead a write out)."""
    folder = Path(os.path.realpath(target.parent))
    return folder == source or source in folder.parents


def _text(data: bytes | None) -> str | None:
    try:
        return "" if data is None else data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _plan(isolation: Isolation, now: str) -> Planned:
    planned = Planned()
    top = isolation.top
    for change in worktree.changes(isolation, now):
        mine = top / change.rel
        rel = os.path.relpath(mine, isolation.root)
        if rel == ".." or rel.startswith("../"):
            continue  # outside the session's root in the repository
        target = isolation.source / rel
        if change.link or not _inside(isolation.source, target) or ".git" in Path(rel).parts:
            planned.left_out.append(rel)
            continue
        theirs = _read(target)
        result = worktree.merged(change.base, change.mine, theirs)
        if result is False:
            planned.conflicts.append(rel)
            planned.kept.append(change.rel)
            continue
        assert not isinstance(result, bool)
        if result == theirs:
            continue
        mode = 0o755 if change.executable else None  # a new file; else its mode stays
        planned.writes.append(Write(target, change.rel, theirs, result, mode))
        before, after = _text(theirs), _text(result)
        if before is None or after is None:
            planned.diff.append(f"Binary file {rel} changes\n")
        elif result is None:
            planned.diff.append(unified_diff(before, "", rel) + f"(deleted: {rel})\n")
        else:
            planned.diff.append(unified_diff(before, after, rel))
    return planned


def _write(planned: Planned) -> None:
    """Each file as planned, unless it changed while the apply was asked (left out)."""
    for write in planned.writes:
        if _read(write.target) != write.theirs:
            planned.moved.append(str(write.target))
            planned.kept.append(write.rel)
        elif write.data is None:
            write.target.unlink(missing_ok=True)
        else:
            atomic_write(write.target, write.data, None if write.target.exists() else write.mode)


async def report(ctx: ToolContext, arguments: dict[str, Any]) -> ToolOutput:
    del arguments
    checkpoints = ctx.services.get(Checkpoints)
    state = checkpoints.state_folder
    isolation = None
    if state is not None:
        isolation = await asyncio.to_thread(worktree.find, ctx.workspace.roots[0], state)
    if isolation is None:
        raise ToolError(
            NOT_ISOLATED,
            "this session is not isolated: its writes already go to the workspace",
            "nothing to apply; workspace:apply is for `toolhost mcp --isolate` sessions",
        )
    try:
        now = await asyncio.to_thread(worktree.tree_of, isolation.top, isolation.gitdir)
        planned = await asyncio.to_thread(_plan, isolation, now)
    except worktree.IsolationError as exc:
        raise ToolError(
            ISOLATION_BROKEN,
            f"the worktree {isolation.top} cannot be read by git: {exc}",
            "tell the user; nothing was applied (the files are still in the worktree)",
        ) from None
    lines = []
    if planned.writes:
        paths = [write.target for write in planned.writes]
        call = CallState(call_id=ctx.call_id, tool=Tool(APPLY, report), session=ctx.session)
        call.paths.extend(paths)
        approver = ctx.services.get(Approver)  # type: ignore[type-abstract]
        request = approval_step.approval_request(
            ctx.config, None, call, "".join(planned.diff), False, ctx.caller
        )
        await approval_step.approve(approver, request, call)
        await _publish(ctx, isolation, checkpoints, planned)
        done = len(paths) - len(planned.moved)
        lines.append(f"applied to {isolation.source} ({done} files, checkpoint {ctx.call_id}):")
        lines.append("".join(planned.diff).rstrip("\n"))
    else:
        lines.append(f"nothing to apply to {isolation.source}")
    if planned.conflicts:
        lines.append(
            "left out, their changes overlap what changed there since (resolve in your "
            "worktree against the folder's text, then apply again): " + ", ".join(planned.conflicts)
        )
    if planned.moved:
        lines.append(
            "left out, changed there while the apply was asked (apply again to merge with "
            "the new text): " + ", ".join(planned.moved)
        )
    if planned.left_out:
        lines.append("left out (links, submodules, .git): " + ", ".join(planned.left_out))
    base = await asyncio.to_thread(worktree.rebased, isolation, now, planned.kept)
    await asyncio.to_thread(worktree.save, isolation._replace(base=base))
    return ToolOutput("\n".join(lines))


async def _publish(
    ctx: ToolContext, isolation: Isolation, checkpoints: Checkpoints, planned: Planned
) -> None:
    """Write under a checkpoint of the source folder's own store (revert undoes it there)."""
    source = Checkpoints(
        Workspace([isolation.source]), checkpoints.config, checkpoints.state_folder
    )
    moves: list[tuple[Path, Path | None]] = [(write.target, None) for write in planned.writes]
    window = await source.before_write(ctx.call_id, ctx.session.id, APPLY_ID, moves)
    if window is not None:
        window.agent = ctx.session.agent
    try:
        await asyncio.to_thread(_write, planned)
    finally:
        await source.after_write(window)
        await source.settle()
        await asyncio.to_thread(source.watchers.close)
    _note_activity(ctx, checkpoints, isolation, planned)


def _note_activity(
    ctx: ToolContext, checkpoints: Checkpoints, isolation: Isolation, planned: Planned
) -> None:
    """The folder's activity log names the session for each file it applied, so that the
    sessions working there see who changed it (not "another program")."""
    activity = WorkspaceActivity.for_root(checkpoints.state_folder, isolation.source)
    session, agent = ctx.session.id, ctx.session.agent
    for write in planned.writes:
        if str(write.target) in planned.moved:
            continue
        before, after = _text(write.theirs), _text(write.data)
        if write.data is None or after is None:
            activity.touched(write.target, session, agent, APPLY_ID)
        else:
            activity.record(write.target, before, after, session, agent, APPLY_ID)
