"""Reading and publishing files for tools, with the observation lifecycle enforced.

The document source is the disk, or an editor buffer when the file is open in the client
(`documents`, see runtime/documents.py); writers never touch a file directly.
"""

from __future__ import annotations

import errno
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import anyio

from lsp_server.runtime import textio
from lsp_server.runtime.errors import (
    EDIT_UNENCODABLE,
    FS_ALREADY_EXISTS,
    FS_BINARY,
    FS_IS_DIRECTORY,
    FS_NOT_A_FILE,
    FS_NOT_FOUND,
    FS_NOT_OBSERVED,
    FS_PERMISSION,
    FS_STALE_VERSION,
    FS_TOO_LARGE,
    ToolError,
)
from lsp_server.runtime.textio import FileVersion, TextFile, Version

if TYPE_CHECKING:
    from lsp_server.config.tree import Limits
    from lsp_server.runtime.observations import Observations
    from lsp_server.runtime.results import FileChange
    from lsp_server.runtime.workspace import Workspace


INLINE_READ_BYTES = 256 * 1024


class DocumentSource(Protocol):
    """Editor buffers: the open document for a path, and edits applied through the editor."""

    def open_document(self, path: Path) -> TextFile | None: ...

    async def publish(
        self, change: FileChange, observations: Observations
    ) -> str | FileChange | None:
        """Offer a change to the editor. Returns a note for the result when it was applied to
        an open buffer (the session's observation then holds the new buffer version); a
        FileChange for the disk publisher when the change must happen on disk although the
        file was read from a buffer (a move or delete of a buffer equal to the disk, re-based
        on the disk's version); None when the path is not open in the editor."""
        ...


class FileService:
    def __init__(
        self,
        workspace: Workspace,
        observations: Observations,
        limits: Limits,
        documents: DocumentSource | None = None,
    ) -> None:
        self.workspace = workspace
        self.observations = observations
        self.limits = limits
        self.documents = documents

    # -- reading ---------------------------------------------------------------

    async def read_text(self, path: Path) -> TextFile:
        if self.documents is not None:
            buffer = self.documents.open_document(path)
            if buffer is not None:
                return buffer
        try:
            small = path.stat().st_size <= INLINE_READ_BYTES  # noqa: ASYNC240
        except OSError:
            small = True  # _read_disk reports the problem
        if small:
            # A few KiB read inline costs less than a worker-thread round trip.
            return self._read_disk(path)
        return await anyio.to_thread.run_sync(self._read_disk, path)

    def _read_disk(self, path: Path) -> TextFile:
        rel = self.workspace.relative(path)
        try:
            st = path.stat()
        except FileNotFoundError:
            raise ToolError(
                FS_NOT_FOUND, f"{rel} does not exist", "check the path (ls or glob can help)"
            ) from None
        if stat.S_ISDIR(st.st_mode):
            raise ToolError(
                FS_IS_DIRECTORY, f"{rel} is a directory", "use ls to list it, then read a file"
            )
        if not stat.S_ISREG(st.st_mode):
            raise ToolError(FS_NOT_A_FILE, f"{rel} is not a regular file", "read a regular file")
        if st.st_size > self.limits.max_file_bytes:
            raise ToolError(
                FS_TOO_LARGE,
                f"{rel} has {st.st_size} bytes, over the {self.limits.max_file_bytes} byte limit",
                "use grep to find what you need in it",
            )
        data = path.read_bytes()
        try:
            text, encoding, bom = textio.decode(data)
        except textio.DecodeError as exc:
            raise ToolError(
                FS_BINARY,
                f"{rel} is not text ({exc})",
                "use view_image for images; binary files cannot be read as text",
            ) from None
        version = textio.version_from_stat(st, data)
        return TextFile(path, text, encoding, bom, version, mode=st.st_mode)

    # -- observations ------------------------------------------------------------

    def observe(self, text_file: TextFile) -> None:
        self.observations.record_present(text_file.path, text_file.version)

    def observe_absent(self, path: Path) -> None:
        self.observations.record_absent(path)

    async def load_for_write(self, path: Path) -> TextFile:
        """The current text of a file this session observed at its current version."""
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
        self._require_same(rel, seen.version, current.version)
        if current.version != seen.version:
            # Same bytes, new metadata (a touch or an identical save): refresh silently.
            self.observations.record_present(path, current.version)
        return current

    def _require_same(self, rel: str, seen: Version, now: Version) -> None:
        if type(seen) is type(now) and seen.same_content(now):  # type: ignore[arg-type]
            return
        if type(seen) is not type(now) and seen.sha256 is not None and seen.sha256 == now.sha256:
            # Read from disk, now open in the editor (or the reverse): a buffer's hash is that
            # of its UTF-8 text, so equal hashes mean the buffer holds the bytes that were read.
            return
        raise ToolError(
            FS_STALE_VERSION,
            f"{rel} changed since this session read it ({describe_change(seen, now)})",
            "read the file again (any window), then redo the edit against what is there now",
        )

    # -- publishing ---------------------------------------------------------------

    async def publish(self, change: FileChange) -> str | None:
        """Apply one change after re-checking that the file is still what was observed."""
        if self.documents is not None:
            outcome = await self.documents.publish(change, self.observations)
            if isinstance(outcome, str):
                return outcome
            if outcome is not None:
                change = outcome
        return await anyio.to_thread.run_sync(self._publish_disk, change)

    def _publish_disk(self, change: FileChange) -> str | None:
        path = change.path
        rel = self.workspace.relative(path)
        before = change.before
        if before is None:
            data = change.raw_after
            if data is None:
                data = (change.after or "").encode("utf-8")
            try:
                textio.atomic_create(path, data)
            except FileExistsError:
                raise ToolError(
                    FS_ALREADY_EXISTS,
                    f"{rel} already exists (another writer created it first)",
                    "read it with read_file, then edit it or overwrite it with write_file",
                ) from None
            self._record_written(path)
            return None
        now = textio.current_version(path, self.limits.hash_limit_bytes)
        if now is None:
            raise ToolError(FS_STALE_VERSION, f"{rel} was deleted meanwhile", "check, then retry")
        self._require_same(rel, before.version, now)
        if change.destination is not None:
            try:
                textio.atomic_move(path, change.destination)
            except FileExistsError:
                dest = self.workspace.relative(change.destination)
                raise ToolError(
                    FS_ALREADY_EXISTS, f"{dest} already exists", "choose another destination"
                ) from None
            self.observations.record_absent(path)
            self._record_written(change.destination)
            return None
        if change.after is None and change.raw_after is None:
            path.unlink()
            self.observations.record_absent(path)
            return None
        if change.raw_after is not None:
            data = change.raw_after
        else:
            try:
                data = textio.encode_like(change.after or "", before.encoding, before.bom)
            except textio.DecodeError as exc:
                raise ToolError(
                    EDIT_UNENCODABLE, f"{rel}: {exc}", "use characters the file's encoding has"
                ) from None
        try:
            textio.atomic_replace(path, data)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise ToolError(
                    FS_PERMISSION,
                    f"{rel} cannot be written ({exc.strerror})",
                    "check its permissions",
                ) from None
            raise
        self._record_written(path)
        return None

    def _record_written(self, path: Path) -> None:
        version = textio.current_version(path, self.limits.hash_limit_bytes)
        if version is not None:
            self.observations.record_present(path, version)


def describe_change(seen: Version, now: Version) -> str:
    if isinstance(seen, FileVersion) and isinstance(now, FileVersion):
        parts = []
        if seen.size != now.size:
            parts.append(f"size {seen.size} -> {now.size} bytes")
        if seen.mtime_ns != now.mtime_ns:
            parts.append("modification time changed")
        if seen.inode != now.inode:
            parts.append("file replaced")
        if not parts:
            parts.append("content changed")
        return ", ".join(parts)
    return "the editor buffer changed"
