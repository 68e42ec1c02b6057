"""What a tool's run() returns: output for readers, a write plan for writers."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import attrs

if TYPE_CHECKING:
    from lsp_server.fs.textio import TextFile


@attrs.frozen
class ImagePart:
    mime_type: str
    data: bytes


@attrs.define
class ToolOutput:
    """A successful result. Dispatch bounds `text` (output contract) and pages the rest."""

    text: str
    images: list[ImagePart] = attrs.Factory(list)
    # Real paths the call touched, for meta.paths, the audit log and didCall.
    paths: list[Path] = attrs.Factory(list)


@attrs.define
class FileChange:
    """One file a writer wants to change. `before` is the observed file it was computed from
    (None: create a new file); `after` is the new text (None: delete); `destination`
    moves the file (move_file)."""

    path: Path
    before: TextFile | None
    after: str | None
    destination: Path | None = None
    # Bytes to write verbatim instead of encoding `after` (notebooks keep their own JSON).
    raw_after: bytes | None = None


@attrs.define
class WritePlan:
    """A writer's proposed change. Dispatch shows its diff for approval, then re-checks the
    observations under the file locks and publishes atomically; `message` becomes the result
    text (publisher notes such as "the disk is behind the editor buffer" are appended)."""

    changes: list[FileChange]
    message: str


class PublishWitness(Protocol):
    """Told what publishing a plan swaps on disk, so that the call's checkpoint need not
    read the files again (checkpoints/write_states.py)."""

    def in_editor(self, path: Path) -> None:
        """The change of `path` goes to its open editor buffer."""

    def replacing(self, path: Path, data: bytes | None, st_mode: int) -> None:
        """`path` held `data` (None: too large to hash) at the last check; the rename
        follows."""

    def replaced(self, path: Path, data: bytes, st_mode: int) -> None:
        """The rename put `data` at `path`, with `st_mode`."""
