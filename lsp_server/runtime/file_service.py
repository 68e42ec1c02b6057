"""Reading and publishing files for tools, with the observation lifecycle enforced.

The document source is the disk, or an editor buffer when the file is open in the client
(`documents`, see runtime/buffers/documents.py); writers never touch a file directly.
"""

from __future__ import annotations

import errno
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import anyio

from lsp_server.core.errors import (
    EDIT_NOT_FOUND,
    EDIT_NOT_UNIQUE,
    EDIT_UNENCODABLE,
    FS_ALREADY_EXISTS,
    FS_BINARY,
    FS_EDIT_CONFLICT,
    FS_NOT_FOUND,
    FS_NOT_OBSERVED,
    FS_PERMISSION,
    FS_STALE_VERSION,
    FS_TOO_LARGE,
    ToolError,
)
from lsp_server.fs import beneath, diskwrite, hardlinks, textio
from lsp_server.fs.textio import FileVersion, TextFile, Version
from lsp_server.runtime.approvals.stale_diff import describe_change, stale_refusal, what_changed
from lsp_server.runtime.context import NOBODY, Caller
from lsp_server.runtime.sessions.activity import Writer
from lsp_server.runtime.sessions.edit_merge import Merge
from lsp_server.runtime.sessions.observations import SEEN_TEXT_CHARS, SeenContent

if TYPE_CHECKING:
    from lsp_server.config.tree import Limits
    from lsp_server.core.tool_output import FileChange, PublishWitness
    from lsp_server.fs.workspace import Workspace
    from lsp_server.runtime.sessions.observations import Observations


INLINE_READ_BYTES = 256 * 1024


class DocumentSource(Protocol):
    """Editor buffers: the open document for a path, and edits applied through the editor."""

    def open_document(self, path: Path) -> TextFile | None: ...

    async def publish(
        self, change: FileChange, observations: Observations, caller: Caller
    ) -> str | FileChange | None:
        """Offer a change to the editor. Returns a note for the result when it was applied to
        an open buffer (the session's observation then holds the new buffer version); a
        FileChange for the disk publisher when the change must happen on disk although the
        file was read from a buffer (a move or delete of a buffer equal to the disk, re-based
        on the disk's version); None when the path is not open in the editor. `caller`: whom
        the call is for (an editor's own request names the session whose buffer may take
        the change)."""
        ...


class FileService:
    def __init__(
        self,
        workspace: Workspace,
        observations: Observations,
        limits: Limits,
        documents: DocumentSource | None = None,
        caller: Caller = NOBODY,
        writer: Writer | None = None,
    ) -> None:
        self.workspace = workspace
        self.observations = observations
        self.limits = limits
        self.documents = documents
        self.caller = caller
        """Whom the call that publishes is for (the document source may need to know)."""
        self.writer = writer
        """The call's session, agent and tool: its writes are recorded in their name
        (sessions/activity.py), and refusals name who else changed a file."""

    # -- reading ---------------------------------------------------------------

    async def read_text(self, path: Path) -> TextFile:
        if self.documents is not None:
            buffer = self.documents.open_document(path)
            if buffer is not None:
                return buffer
        # A file of a few KiB is read inline (cheaper than a worker-thread round trip); a
        # bigger one is opened again in a worker thread.
        small = self._read_disk(path, INLINE_READ_BYTES)
        if small is not None:
            return small
        return await anyio.to_thread.run_sync(self._read_whole, path)

    def _read_whole(self, path: Path) -> TextFile:
        text_file = self._read_disk(path)
        assert text_file is not None  # no inline limit: too large is a ToolError
        return text_file

    def _read_disk(self, path: Path, inline_bytes: int | None = None) -> TextFile | None:
        """The file's text; None when it has more than `inline_bytes` (and is not too
        large to read at all)."""
        rel = self.workspace.relative(path)
        root = self.workspace.confining_root(path)
        limit = self.limits.max_file_bytes
        st, data = beneath.read_regular(root, path, rel, min(limit, inline_bytes or limit))
        if data is None and inline_bytes is not None and st.st_size <= limit:
            return None
        if data is None:
            raise ToolError(
                FS_TOO_LARGE,
                f"{rel} has {st.st_size} bytes, over the {self.limits.max_file_bytes} byte limit",
                "use grep to find what you need in it",
            )
        if st.st_nlink > 1:
            hardlinks.require_all_inside(self.workspace, root, path, st)
        try:
            text, encoding, bom = textio.decode(data)
        except textio.DecodeError as exc:
            raise ToolError(
                FS_BINARY,
                f"{rel} is not text ({exc})",
                "use view_image for images; binary files cannot be read as text",
            ) from None
        # The version of exactly these bytes: stat and read came from one open file.
        version = textio.version_from_stat(st, data)
        return TextFile(path, text, encoding, bom, version, mode=st.st_mode)

    # -- observations ------------------------------------------------------------

    def observe(self, text_file: TextFile) -> None:
        self.observations.record_present(text_file.path, text_file.version, text_file.text)

    def observe_absent(self, path: Path) -> None:
        self.observations.record_absent(path)

    async def load_for_write(self, path: Path) -> TextFile:
        """The current text of a file this session observed at its current version."""
        current, _ = await self._load(path, merge=False)
        return current

    async def load_for_edit(self, path: Path) -> tuple[TextFile, Merge | None]:
        """As load_for_write, but a file that changed since the session read it is loaded
        too when the text read is still known: the Merge then checks (`settle`) that the
        edit touches none of the lines changed since (edit_merge.py)."""
        return await self._load(path, merge=True)

    def settle(self, merge: Merge | None, after: str) -> str:
        """The note for an edit's result ("also changed since your read: ..."), or
        FS_EDIT_CONFLICT when the edit overlaps a change made since the session's read."""
        if merge is None:
            return ""
        change = what_changed(SeenContent.of(merge.base), merge.current)
        try:
            return merge.check(after, change.text)
        except ToolError as exc:
            raise self._shown(merge, exc, change.complete) from None

    def _shown(self, merge: Merge, conflict: ToolError, complete: bool) -> ToolError:
        if complete and conflict.code == FS_EDIT_CONFLICT:
            # The whole new content is in the diff: the session counts as having read it.
            self.observations.record_present(merge.path, merge.version, merge.current)
            conflict.recovery = (
                "the diff above is complete and this session now counts as having read the "
                "new content: redo the edit against it, keeping the other change"
            )
        return conflict

    def unmerged(self, merge: Merge | None, failure: ToolError) -> ToolError:
        """An edit that failed on a file changed since the read: FS_EDIT_CONFLICT naming
        who changed it (the change may be why), else the failure as it is."""
        if merge is None or failure.code not in (EDIT_NOT_FOUND, EDIT_NOT_UNIQUE):
            return failure
        change = what_changed(SeenContent.of(merge.base), merge.current)
        return self._shown(merge, merge.unmatched(failure, change.text), change.complete)

    def who_changed(self, path: Path, text: str, in_editor: bool) -> str:
        """Who left `path` holding `text`: a toolhost session, the editor's user, or an
        unknown program."""
        found = self.writer.activity.left(path, text) if self.writer is not None else None
        if found is not None:
            return found.label()
        return "the user in the editor" if in_editor else "another program (not a toolhost session)"

    async def _load(self, path: Path, merge: bool) -> tuple[TextFile, Merge | None]:
        rel = self.workspace.relative(path)
        seen = self.observations.get(path)
        try:
            current = await self.read_text(path)
        except ToolError as exc:
            if exc.code == FS_NOT_FOUND and seen is not None and seen.state == "present":
                raise ToolError(
                    FS_STALE_VERSION,
                    f"{rel} was deleted since this session read it",
                    "check with ls or glob, then recreate it with write_file if intended",
                ) from None
            raise
        if seen is None:
            raise ToolError(
                FS_NOT_OBSERVED,
                f"{rel} exists but this session has not read it",
                "read any window of the file with read_file, then retry",
            )
        if seen.state == "absent" or seen.version is None:
            raise ToolError(
                FS_STALE_VERSION,
                f"{rel} was created by someone else after this session saw it missing",
                "read the file with read_file, then retry",
            )
        if not same_version(seen.version, current.version):
            in_editor = not isinstance(current.version, FileVersion)
            who = self.who_changed(path, current.text, in_editor)
            base = seen.seen.text if seen.seen is not None else None
            if merge and base is not None:
                activity = self.writer.activity if self.writer is not None else None
                return current, Merge(path, rel, base, current.text, who, current.version, activity)
            change = describe_change(seen.version, current.version)
            what = f"changed since this session read it ({change}; last by {who})"
            if merge:
                what += (
                    "; toolhost keeps no copy of what this session read of it (over "
                    f"{SEEN_TEXT_CHARS // 1024} KiB, or dropped under memory pressure), so "
                    "the edit cannot be merged with the change"
                )
            raise stale_refusal(rel, what, seen.seen, current, self.observations)
        if current.version != seen.version:
            # Same bytes, new metadata (a touch or an identical save): refresh silently.
            self.observations.record_present(path, current.version, current.text)
        return current, None

    def _require_same(self, rel: str, seen: Version, now: Version) -> None:
        if same_version(seen, now):
            return
        raise ToolError(
            FS_STALE_VERSION,
            f"{rel} changed since this session read it ({describe_change(seen, now)})",
            "read the file again (any window), then redo the edit against what is there now",
        )

    # -- publishing ---------------------------------------------------------------

    async def publish(
        self, change: FileChange, witness: PublishWitness | None = None
    ) -> str | None:
        """Apply one change after re-checking that the file is still what was observed;
        `witness` is told the states a replace swaps."""
        if self.documents is not None:
            if witness is not None and self.documents.open_document(change.path) is not None:
                witness.in_editor(change.path)
            outcome = await self.documents.publish(change, self.observations, self.caller)
            if isinstance(outcome, str):
                self._wrote(change)
                return outcome
            if outcome is not None:
                change = outcome
        try:
            note = await anyio.to_thread.run_sync(self._publish_disk, change, witness)
        except ToolError as exc:
            if exc.code != FS_STALE_VERSION or change.before is None:
                raise
            raise await self._stale_with_diff(exc, change.before) from None
        self._wrote(change)
        return note

    def _wrote(self, change: FileChange) -> None:
        if self.writer is not None:
            before = change.before.text if change.before is not None else None
            self.writer.wrote(change.destination or change.path, before, _text_of(change))

    async def _stale_with_diff(self, exc: ToolError, before: TextFile) -> ToolError:
        """The file changed between the load and the rename: show what changed since."""
        try:
            current = await self.read_text(before.path)
        except ToolError:
            return exc  # gone or unreadable now: the refusal says so already
        rel = self.workspace.relative(before.path)
        seen = SeenContent.of(before.text)
        in_editor = not isinstance(current.version, FileVersion)
        what = exc.cause.removeprefix(f"{rel} ")
        what += f" (by {self.who_changed(before.path, current.text, in_editor)})"
        return stale_refusal(rel, what, seen, current, self.observations)

    def _publish_disk(self, change: FileChange, witness: PublishWitness | None) -> str | None:
        """Create, replace, move or delete through descriptors opened beneath the root;
        the observed version is re-checked against the open file right before the rename."""
        path = change.path
        rel = self.workspace.relative(path)
        root = self.workspace.confining_root(path)
        limit = self.limits.hash_limit_bytes
        before = change.before
        if before is None:
            try:
                written = diskwrite.create(root, path, rel, self._bytes_of(change, None), limit)
            except FileExistsError:
                if beneath.loops(path):  # a link loop left unresolved, not a new file
                    raise beneath.link_loop(rel) from None
                raise ToolError(
                    FS_ALREADY_EXISTS,
                    f"{rel} already exists (another writer created it first)",
                    "read it with read_file, then edit it or overwrite it with write_file",
                ) from None
            self.observations.record_present(path, written.version, _text_of(change))
            return None
        check = functools.partial(self._require_same, rel, before.version)
        try:
            return self._publish_existing(change, before, root, check, witness)
        except ToolError as exc:
            if exc.code == FS_NOT_FOUND:
                raise ToolError(
                    FS_STALE_VERSION, f"{rel} was deleted meanwhile", "check, then retry"
                ) from None
            raise
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise ToolError(
                    FS_PERMISSION,
                    f"{rel} cannot be written ({exc.strerror})",
                    "check its permissions",
                ) from None
            raise

    def _publish_existing(
        self,
        change: FileChange,
        before: TextFile,
        root: Path,
        check: diskwrite.VersionCheck,
        witness: PublishWitness | None,
    ) -> str | None:
        path = change.path
        rel = self.workspace.relative(path)
        limit = self.limits.hash_limit_bytes
        if change.destination is not None:
            dest = change.destination
            dest_rel = self.workspace.relative(dest)
            target = (self.workspace.confining_root(dest), dest, dest_rel)
            try:
                written = diskwrite.move(root, (path, rel), target, check, limit)
            except FileExistsError:
                if beneath.loops(path):  # a link loop left unresolved, not a new file
                    raise beneath.link_loop(rel) from None
                raise ToolError(
                    FS_ALREADY_EXISTS, f"{dest_rel} already exists", "choose another destination"
                ) from None
            self.observations.record_absent(path)
            self.observations.record_present(dest, written.version, before.text)
            return None
        if change.after is None and change.raw_after is None:
            diskwrite.delete(root, path, rel, check, limit)
            self.observations.record_absent(path)
            return None
        data = self._bytes_of(change, before)
        replacing = functools.partial(witness.replacing, path) if witness else None
        written = diskwrite.replace(root, path, rel, data, check, limit, replacing)
        if witness is not None:
            witness.replaced(path, data, written.mode)
        self.observations.record_present(path, written.version, _text_of(change))
        return written.note

    def _bytes_of(self, change: FileChange, before: TextFile | None) -> bytes:
        if change.raw_after is not None:
            return change.raw_after
        if before is None:
            return (change.after or "").encode("utf-8")
        try:
            return textio.encode_like(change.after or "", before.encoding, before.bom)
        except textio.DecodeError as exc:
            rel = self.workspace.relative(change.path)
            raise ToolError(
                EDIT_UNENCODABLE, f"{rel}: {exc}", "use characters the file's encoding has"
            ) from None


def same_version(seen: Version, now: Version) -> bool:
    if type(seen) is type(now) and seen.same_content(now):  # type: ignore[arg-type]
        return True
    # Read from disk, now open in the editor (or the reverse): a buffer's hash is that of its
    # UTF-8 text, so equal hashes mean the buffer holds the bytes that were read.
    return type(seen) is not type(now) and seen.sha256 is not None and seen.sha256 == now.sha256


def _text_of(change: FileChange) -> str | None:
    """The text a change leaves in the file (None: raw bytes, not kept as seen text)."""
    return change.after if change.raw_after is None else None
