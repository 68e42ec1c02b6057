"""Messages of checkpoints: the list of calls that changed files, and reverting one."""

from __future__ import annotations

from typing import Literal

import attrs


@attrs.define
class CheckpointsParams:
    session: str | None = None
    """Only this session's calls (default: every session's)."""
    limit: int = 50


@attrs.define
class CheckpointFile:
    path: str
    change: Literal["modified", "created", "deleted", "moved"]
    from_path: str | None = None
    """The old path of a moved file."""
    not_stored: bool = False
    """Over the checkpoint size limit: recorded by size and hash, a revert cannot restore it."""


@attrs.define
class CheckpointInfo:
    call_id: str
    session: str
    tool: str
    time: float
    """When the call started, in seconds since the epoch."""
    files: list[CheckpointFile]
    label: str = ""
    """The command (bash), or the call that a revert undid."""
    reverts: str | None = None
    agent: str | None = None
    """The session's agent, as its face named it (MCP clientInfo, ACP, the editor)."""


@attrs.define
class CheckpointsResult:
    checkpoints: list[CheckpointInfo]


@attrs.define
class RevertParams:
    call_id: str
    session: str = "default"
    include_shared: bool = False
    """Revert too the files of a shell command that another writer may also have changed
    while it ran (left out and listed otherwise)."""


@attrs.define
class RevertConflict:
    path: str
    reason: str
    diff: str
    """What changed at the path since the call (unified diff, from the call's result)."""


@attrs.define
class RevertResult:
    reverted: list[str]
    conflicts: list[RevertConflict]
    checkpoint: str | None = None
    """The call id the revert was recorded under: revert it to undo the revert."""
    text: str = ""
    """A summary for people."""


@attrs.define
class SessionChangesParams:
    session: str


@attrs.define
class SessionChangesResult:
    """Everything one session changed, as one diff: each file from before the session's
    first change of it to after its last (later changes by others are not in it)."""

    session: str
    agent: str | None
    calls: list[str]
    """The session's calls that changed files, oldest first."""
    files: list[CheckpointFile]
    diff: str
    text: str = ""


@attrs.define
class RevertSessionParams:
    session: str
    """The session whose every call is reverted, newest first."""
    by: str = "default"
    """The session that reverts (the reverts are its checkpoints)."""
    include_shared: bool = False


@attrs.define
class RevertSessionResult:
    reverted: list[str]
    """Files put back, by any of the reverts."""
    conflicts: list[RevertConflict]
    calls: list[str]
    """The calls reverted, newest first."""
    checkpoints: list[str]
    """The reverts' own call ids (each can be reverted to redo)."""
    text: str = ""
