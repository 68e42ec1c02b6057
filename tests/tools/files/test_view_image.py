"""view_image: content sniffing, limits and refusals with their codes."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from tests.helpers import call_tool, make_runtime, text_of


def image_bytes(fmt: str, size: tuple[int, int] = (64, 32)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (200, 10, 10)).save(buffer, format=fmt)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("fmt", "mime", "name"),
    [
        ("PNG", "image/png", "a.png"),
        ("JPEG", "image/jpeg", "b.jpg"),
        ("GIF", "image/gif", "c.gif"),
        ("WEBP", "image/webp", "d.webp"),
        ("PNG", "image/png", "misnamed.jpg"),
    ],
)
async def test_images_are_recognised_by_content(
    tmp_path: Path, fmt: str, mime: str, name: str
) -> None:
    data = image_bytes(fmt)
    (tmp_path / name).write_bytes(data)
    result = await call_tool(make_runtime(tmp_path), "view_image", {"path": name})
    assert not result.is_error, result.error
    assert text_of(result) == f"[image: {mime}, 64x32] {name}"
    images = [part for part in result.content if part["type"] == "image"]
    assert len(images) == 1
    assert images[0]["mimeType"] == mime


async def test_text_with_an_image_name_is_refused(tmp_path: Path) -> None:
    (tmp_path / "fake.png").write_text("this is not a picture\n")
    result = await call_tool(make_runtime(tmp_path), "view_image", {"path": "fake.png"})
    assert result.is_error and result.error is not None
    assert result.error.code == "image.unsupported"
    assert "fake.png is not a PNG, JPEG, GIF or WebP image" in result.error.message


async def test_truncated_image_is_refused(tmp_path: Path) -> None:
    (tmp_path / "cut.png").write_bytes(image_bytes("PNG")[:20])
    result = await call_tool(make_runtime(tmp_path), "view_image", {"path": "cut.png"})
    assert result.is_error and result.error is not None
    assert result.error.code == "image.unsupported"


async def test_too_many_bytes(tmp_path: Path) -> None:
    (tmp_path / "big.png").write_bytes(image_bytes("PNG") + b"\0" * (3 * 1024 * 1024))
    result = await call_tool(make_runtime(tmp_path), "view_image", {"path": "big.png"})
    assert result.is_error and result.error is not None
    assert result.error.code == "image.too_large"
    assert "3 MiB" in result.error.message


async def test_too_many_pixels(tmp_path: Path) -> None:
    # 8000x6000 = 48 megapixels, a few kilobytes as a one-colour PNG.
    (tmp_path / "huge.png").write_bytes(image_bytes("PNG", (8000, 6000)))
    result = await call_tool(make_runtime(tmp_path), "view_image", {"path": "huge.png"})
    assert result.is_error and result.error is not None
    assert result.error.code == "image.too_large"
    assert "8000x6000" in result.error.message
