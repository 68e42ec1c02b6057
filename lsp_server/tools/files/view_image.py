"""view_image: an image file as an image content part, its kind sniffed from the bytes."""

from __future__ import annotations

import io
import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import attrs

from lsp_server.core.contract import ContractEntry, PathArg, Tool
from lsp_server.core.errors import IMAGE_TOO_LARGE, IMAGE_UNSUPPORTED, ToolError
from lsp_server.core.tool_output import ImagePart, ToolOutput
from lsp_server.fs import beneath, hardlinks
from lsp_server.fs.workspace import Workspace
from lsp_server.runtime.context import ToolContext
from lsp_server.tools._support.schema_parts import object_schema, string

if TYPE_CHECKING:
    pass

MAX_IMAGE_BYTES = 3 * 1024 * 1024
MAX_IMAGE_PIXELS = 40_000_000

# Magic bytes -> (mime type, Pillow's format name). The extension is never trusted.
_SIGNATURES: tuple[tuple[bytes, int, str, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "image/png", "PNG"),
    (b"\xff\xd8\xff", 0, "image/jpeg", "JPEG"),
    (b"GIF87a", 0, "image/gif", "GIF"),
    (b"GIF89a", 0, "image/gif", "GIF"),
    (b"WEBP", 8, "image/webp", "WEBP"),
)

CONTRACT = ContractEntry(
    name="view_image",
    core=True,
    read_only=True,
    kind="read",
    description=(
        "Look at an image file (PNG, JPEG, GIF or WebP, recognised from its content; at "
        "most 3 MiB and 40 megapixels). Returns the image and a line "
        "`[image: <mime>, WxH] <path>`."
    ),
    schema=object_schema({"path": string("The image file.")}, ["path"]),
    path_args=(PathArg("path", access="read"),),
)


@attrs.frozen
class ImageInfo:
    mime: str
    width: int
    height: int


def sniff_mime(head: bytes) -> tuple[str, str] | None:
    if head.startswith(b"RIFF") and head[8:12] != b"WEBP":
        return None
    for magic, offset, mime, pil_format in _SIGNATURES:
        if head[offset : offset + len(magic)] == magic:
            return mime, pil_format
    return None


def _kind_or_refuse(head: bytes, shown: str) -> tuple[str, str]:
    kind = sniff_mime(head)
    if kind is None:
        raise ToolError(
            IMAGE_UNSUPPORTED,
            f"{shown} is not a PNG, JPEG, GIF or WebP image (judged by its content, not its name)",
            "read it with read_file if it is text; other image formats are not supported",
        )
    return kind


def _too_large(shown: str, what: str) -> ToolError:
    return ToolError(
        IMAGE_TOO_LARGE,
        f"{shown} {what}",
        "make a smaller copy first (for example with bash: convert in.png -resize 50% out.png)",
    )


def inspect_image(data: bytes, shown: str) -> ImageInfo:
    """Check the bytes are a supported image within the limits; refusals name the reason."""
    from PIL import Image

    mime, pil_format = _kind_or_refuse(data[:16], shown)
    if len(data) > MAX_IMAGE_BYTES:
        raise _too_large(shown, f"is {len(data)} bytes; the limit is {MAX_IMAGE_BYTES} (3 MiB)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            # Opening reads the header only: the pixels are never decoded here.
            with Image.open(io.BytesIO(data), formats=[pil_format]) as image:
                width, height = image.size
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise _too_large(shown, f"has too many pixels ({exc})") from exc
    except (OSError, SyntaxError, ValueError) as exc:
        raise ToolError(
            IMAGE_UNSUPPORTED,
            f"{shown} starts like a {mime} image but cannot be decoded: {exc}",
            "the file is damaged or truncated; regenerate it",
        ) from exc
    if width * height > MAX_IMAGE_PIXELS:
        raise _too_large(
            shown, f"has {width}x{height} pixels; the limit is {MAX_IMAGE_PIXELS} pixels"
        )
    return ImageInfo(mime, width, height)


def load_image(workspace: Workspace, path: Path, shown: str) -> tuple[ImageInfo, bytes]:
    """Read beneath the root through one descriptor (fs/beneath.py): no symlink
    swapped in after the path was checked is followed; hard links as for read_file."""
    root = workspace.confining_root(path)
    st, data = beneath.read_regular(root, path, shown, MAX_IMAGE_BYTES)
    if st.st_nlink > 1:
        hardlinks.require_all_inside(workspace, root, path, st)
    if data is None:
        with beneath.parent_of(root, path, shown) as dir_fd:
            fd = beneath.open_in(dir_fd, path.name, beneath.READ_FLAGS, shown)
        with os.fdopen(fd, "rb") as handle:
            head = handle.read(16)
        # Say what the file is (or is not) without reading all of it.
        _kind_or_refuse(head, shown)
        size = st.st_size
        raise _too_large(shown, f"is {size} bytes; the limit is {MAX_IMAGE_BYTES} (3 MiB)")
    return inspect_image(data, shown), data


async def run(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    path: Path = ctx.paths["path"]
    ctx.workspace.require_not_secret(path)
    shown = ctx.workspace.relative(path)
    info, data = await anyio.to_thread.run_sync(load_image, ctx.workspace, path, shown)
    return ToolOutput(
        f"[image: {info.mime}, {info.width}x{info.height}] {shown}",
        images=[ImagePart(info.mime, data)],
        paths=[path],
    )


TOOLS = (Tool(CONTRACT, run),)
