"""How one recorded change is put back, decided without touching anything.

A revert undoes exactly what the call did. For each path, the state the call left ("after")
is compared with what is there now:
- the same: the state before the call comes back, byte for byte and with its mode;
- a text file changed since in other places: the call's own change is taken out of the
  current text (a three-way merge: current, base = after, other = before), so the other
  person's edits stay;
- changed where the call changed it, deleted, or re-created since: nothing is written and
  the path is a conflict, with the diff of what changed since the call;
- not reachable beneath the root without following a link (a folder on the way is now a
  symlink, or the path is a hard link, a FIFO, a device: `Blocked`, see revert_disk.py):
  a conflict that says why.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping

import attrs

from lsp_server.checkpoints.records import FileRecord
from lsp_server.checkpoints.shadow.large_files import is_pointer
from lsp_server.checkpoints.shadow.objects import object_id
from lsp_server.checkpoints.shadow.tree_changes import Entry
from lsp_server.core.diffs import unified_diff
from lsp_server.fs import textio

LINK_MODE = 0o120000  # git's mode of a symlink

# (current, base, other) -> merged bytes, or None when the changes overlap.
Merge = Callable[[bytes, bytes, bytes], bytes | None]


@attrs.frozen
class Present:
    """What a path holds now. `data` is None for a file over the size limit."""

    data: bytes | None
    mode: int
    oid: str

    @classmethod
    def of(cls, data: bytes, mode: int) -> Present:
        return cls(data, mode, object_id("blob", data))


Current = Present | None  # None: nothing at the path


@attrs.frozen
class Blocked:
    """The path cannot be reached or written beneath its root without following a link (or
    holds what a revert never writes through); `reason` says what is in the way."""

    reason: str
    folder: str | None = None
    """The folder on the way that is something else now (a link, a file), when that is it."""


State = Current | Blocked


@attrs.frozen
class Put:
    """Make `path` hold `data` with `mode` (data None: remove the path)."""

    path: str
    data: bytes | None
    mode: int = 0o100644
    current: Current = None


@attrs.frozen
class Refusal:
    path: str
    reason: str
    diff: str = ""


Decision = list[Put] | Refusal | None  # None: the path is already as before the call


def decide_all(
    records: Iterable[FileRecord],
    states: Mapping[str, State],
    blobs: dict[str, bytes],
    merge: Merge,
) -> tuple[list[Put], list[Refusal]]:
    """Every record's decision: what to put, in order, and what is refused. A path refused
    only because what the revert removes stands on its way (a call that replaced a folder
    with a link or a file) is decided again as if that were gone: removals go first, and
    the write below walks the folders again, so it is refused then if the removal was."""
    decisions = [(record, decide(record, states, blobs, merge)) for record in records]
    removed = {
        put.path
        for _, made in decisions
        if isinstance(made, list)
        for put in made
        if put.data is None
    }
    if removed:
        cleared: dict[str, State] = {
            rel: None if isinstance(state, Blocked) and state.folder in removed else state
            for rel, state in states.items()
        }
        decisions = [
            (record, _again(record, made, cleared, blobs, merge)) for record, made in decisions
        ]
    puts: list[Put] = []
    refusals: list[Refusal] = []
    for _, made in decisions:
        if isinstance(made, Refusal):
            refusals.append(made)
        elif made:
            puts.extend(made)
    puts.sort(key=lambda put: put.data is not None)  # removals first (a stable sort)
    return puts, refusals


def _again(
    record: FileRecord,
    made: Decision,
    cleared: Mapping[str, State],
    blobs: dict[str, bytes],
    merge: Merge,
) -> Decision:
    if not isinstance(made, Refusal):
        return made
    retried = decide(record, cleared, blobs, merge)
    return made if isinstance(retried, Refusal) else retried


def decide(
    record: FileRecord,
    states: Mapping[str, State],
    blobs: dict[str, bytes],
    merge: Merge,
) -> Decision:
    now: dict[str, Current] = {}
    for rel in (record.path, record.source):
        if rel is not None:
            state = states.get(rel)
            if isinstance(state, Blocked):
                return Refusal(rel, state.reason)
            now[rel] = state
    decision = _decide(record, now, blobs, merge)
    if isinstance(decision, Refusal):
        return _name_link(decision, record, now.get(decision.path))
    return decision


def _decide(
    record: FileRecord, now: dict[str, Current], blobs: dict[str, bytes], merge: Merge
) -> Decision:
    if record.change == "moved":
        return _moved(record, now, blobs)
    current = now.get(record.path)
    if record.change == "created":
        return _remove_created(record.path, record.after, current, blobs)
    if record.change == "deleted":
        return _bring_back(record.path, record.before, current, blobs)
    return _modified(record, current, blobs, merge)


def _moved(record: FileRecord, now: dict[str, Current], blobs: dict[str, bytes]) -> Decision:
    assert record.source is not None
    removal = _remove_created(record.path, record.after, now.get(record.path), blobs)
    if isinstance(removal, Refusal):
        return attrs.evolve(removal, reason=f"moved here from {record.source}; {removal.reason}")
    back = _bring_back(record.source, record.before, now.get(record.source), blobs)
    if isinstance(back, Refusal):
        return back
    return [*(removal or []), *(back or [])]


def _remove_created(
    path: str, after: Entry | None, current: Current, blobs: dict[str, bytes]
) -> Decision:
    if current is None:
        return None
    if after is not None and current.oid == after.oid and current.mode == after.mode:
        return [Put(path, None, current=current)]
    return Refusal(
        path, "changed since the call created it", _diff_since(path, after, current, blobs)
    )


def _bring_back(
    path: str, before: Entry | None, current: Current, blobs: dict[str, bytes]
) -> Decision:
    assert before is not None
    if current is not None:
        if current.oid == before.oid and current.mode == before.mode:
            return None
        return Refusal(
            path, "re-created since the call removed it", _diff_since(path, None, current, blobs)
        )
    data = blobs.get(before.oid)
    if data is None or is_pointer(data):
        return Refusal(path, _not_stored(data))
    return [Put(path, data, before.mode)]


def _modified(
    record: FileRecord, current: Current, blobs: dict[str, bytes], merge: Merge
) -> Decision:
    before, after, path = record.before, record.after, record.path
    assert before is not None and after is not None
    if current is None:
        return Refusal(
            path, "deleted since the call changed it", _diff_since(path, after, None, blobs)
        )
    # A mode the user changed since is theirs to keep.
    mode = before.mode if current.mode == after.mode else current.mode
    if current.oid == before.oid:
        return None if current.mode == mode else [Put(path, current.data, mode, current)]
    wanted = blobs.get(before.oid)
    if wanted is None or is_pointer(wanted):
        return Refusal(path, _not_stored(wanted))
    if current.oid == after.oid:
        return [Put(path, wanted, mode, current)]
    left = blobs.get(after.oid)
    if current.data is None or left is None or _binary(current.data, left, wanted):
        return Refusal(
            path,
            "changed since the call (not text: cannot merge)",
            _diff_since(path, after, current, blobs),
        )
    merged = merge(current.data, left, wanted)
    if merged is None:
        return Refusal(
            path,
            "changed since the call, in the same lines the call changed",
            _diff_since(path, after, current, blobs),
        )
    return [Put(path, merged, mode, current)]


def _name_link(refusal: Refusal, record: FileRecord, current: Current) -> Refusal:
    """Say so when a symlink now stands where the call left no symlink: it is not followed."""
    if current is None or current.mode != LINK_MODE or current.data is None:
        return refusal
    left = record.after if refusal.path == record.path else None
    if left is not None and left.mode == LINK_MODE:
        return refusal
    target = os.fsdecode(current.data)
    return attrs.evolve(
        refusal,
        reason=f"is now a symbolic link (to {target}), which a revert does not follow; "
        f"{refusal.reason}",
    )


def _not_stored(data: bytes | None) -> str:
    if data is None:
        return "its earlier content is no longer stored (dropped by the checkpoint bounds)"
    size = next((line[5:] for line in data.decode().splitlines() if line.startswith("size ")), "?")
    return (
        f"its earlier content ({size} bytes) was over the checkpoint size limit and was "
        "recorded by size and hash only: it cannot be restored"
    )


def _binary(*parts: bytes) -> bool:
    return any(textio.looks_binary(part) for part in parts)


def _text(data: bytes | None) -> str:
    if data is None:
        return ""
    try:
        return textio.decode(data)[0]
    except textio.DecodeError:
        return f"[binary, {len(data)} bytes]\n"


def _diff_since(path: str, after: Entry | None, current: Current, blobs: dict[str, bytes]) -> str:
    """What changed at `path` since the call: from the call's result to what is there now."""
    left = blobs.get(after.oid) if after is not None else None
    right = current.data if current is not None else None
    if (left is not None and is_pointer(left)) or (current is not None and right is None):
        return "[file over the checkpoint size limit: no diff]\n"
    diff = unified_diff(_text(left), _text(right), path)
    if not diff and current is not None and after is not None and current.mode != after.mode:
        return f"mode {after.mode:o} -> {current.mode:o}\n"
    return diff
