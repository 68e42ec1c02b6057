"""Round-trip property tests: every writer keeps encoding, BOM, endings and mode, and an
edit of one region leaves every other byte identical."""

from __future__ import annotations

import shutil
import stat
import tempfile
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_server.fs import textio
from tests.helpers import call_tool, make_runtime, text_of

ENCODINGS = {
    "utf-8": (b"", "utf-8"),
    "utf-8-sig": (b"\xef\xbb\xbf", "utf-8"),
    "utf-16-le": (b"\xff\xfe", "utf-16-le"),
    "utf-16-be": (b"\xfe\xff", "utf-16-be"),
    "latin-1": (b"", "latin-1"),
    "gbk": (b"", "gbk"),
    "shift_jis": (b"", "shift_jis"),
}
ALPHABETS = {
    "latin-1": "abcdefXYZ éèàçüöñß¿",
    "gbk": "abc 中文测试编码文件内容",
    "shift_jis": "abc 日本語のテキストです",
}
DEFAULT_ALPHABET = "abcXYZ 012 éß中文😀"

words = st.text(alphabet="abcdefghij klm", min_size=1, max_size=12)


def _alphabet(encoding: str) -> str:
    return ALPHABETS.get(encoding, DEFAULT_ALPHABET)


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, list[str], list[str], bool, int]:
    encoding = draw(st.sampled_from(sorted(ENCODINGS)))
    lines = draw(
        st.lists(st.text(alphabet=_alphabet(encoding), max_size=20), min_size=1, max_size=8)
    )
    endings = draw(
        st.lists(st.sampled_from(["\n", "\r\n"]), min_size=len(lines), max_size=len(lines))
    )
    final_newline = draw(st.booleans())
    mode = draw(st.sampled_from([0o644, 0o600, 0o755, 0o664]))
    return encoding, lines, endings, final_newline, mode


def _build(lines: list[str], endings: list[str], final_newline: bool, marker_at: int) -> str:
    out = []
    for index, (line, ending) in enumerate(zip(lines, endings, strict=True)):
        if index == marker_at:
            line = line + "MARKER"
        last = index == len(lines) - 1
        out.append(line + ("" if last and not final_newline else ending))
    return "".join(out)


def _encode(text: str, encoding: str) -> bytes:
    bom, codec = ENCODINGS[encoding]
    return bom + text.encode(codec)


async def _run_writer(root: Path, tool: str, args: dict[str, object]) -> None:
    runtime = make_runtime(root)
    read = await call_tool(runtime, "read_file", {"path": "doc.txt"})
    assert not read.is_error, text_of(read)
    result = await call_tool(runtime, tool, args)
    assert not result.is_error, text_of(result)


def _check(document: tuple[str, list[str], list[str], bool, int], tool: str) -> None:
    encoding, lines, endings, final_newline, mode = document
    marker_at = len(lines) // 2
    original = _encode(_build(lines, endings, final_newline, marker_at), encoding)
    root = Path(tempfile.mkdtemp(prefix="roundtrip-"))
    try:
        target = root / "doc.txt"
        target.write_bytes(original)
        target.chmod(mode)
        if tool == "edit_file":
            args: dict[str, object] = {
                "path": "doc.txt",
                "old_string": "MARKER",
                "new_string": "EDITED",
            }
        elif tool == "multi_edit":
            args = {
                "path": "doc.txt",
                "edits": [
                    {"old_string": "MARKER", "new_string": "STEP"},
                    {"old_string": "STEP", "new_string": "EDITED"},
                ],
            }
        else:
            # The model writes back the text as toolhost showed it, with one region changed.
            text = textio.decode(original)[0].replace("MARKER", "EDITED")
            args = {"path": "doc.txt", "content": text}
        anyio.run(_run_writer, root, tool, args)
        expected = _encode(_build(lines, endings, final_newline, marker_at), encoding)
        expected = expected.replace(
            "MARKER".encode(ENCODINGS[encoding][1]), "EDITED".encode(ENCODINGS[encoding][1])
        )
        assert target.read_bytes() == expected
        assert stat.S_IMODE(target.stat().st_mode) == mode
    finally:
        shutil.rmtree(root, ignore_errors=True)


PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow
@PROPERTY
@given(documents())
def test_edit_file_round_trip(document: tuple[str, list[str], list[str], bool, int]) -> None:
    _check(document, "edit_file")


@pytest.mark.slow
@PROPERTY
@given(documents())
def test_multi_edit_round_trip(document: tuple[str, list[str], list[str], bool, int]) -> None:
    _check(document, "multi_edit")


@pytest.mark.slow
@PROPERTY
@given(documents())
def test_write_file_round_trip(document: tuple[str, list[str], list[str], bool, int]) -> None:
    _check(document, "write_file")


@pytest.mark.slow
@PROPERTY
@given(documents(), st.sampled_from(["\n", "\r\n"]))
def test_delete_range_keeps_other_bytes(
    document: tuple[str, list[str], list[str], bool, int], ending: str
) -> None:
    encoding, lines, endings, final_newline, mode = document
    _, codec = ENCODINGS[encoding]
    body = _build(lines, endings, True, -1)
    if not final_newline:
        body = body.rstrip("\r\n") + "x"
    text = f"START{ending}gone{ending}END{ending}" + body
    original = _encode(text, encoding)
    root = Path(tempfile.mkdtemp(prefix="roundtrip-"))
    try:
        target = root / "doc.txt"
        target.write_bytes(original)
        target.chmod(mode)
        anyio.run(
            _run_writer,
            root,
            "delete_range",
            {"path": "doc.txt", "start_anchor": "START", "end_anchor": "END"},
        )
        prefix = _encode(f"START{ending}gone{ending}END{ending}", encoding)
        bom = ENCODINGS[encoding][0]
        assert target.read_bytes() == bom + original[len(prefix) :]
        assert stat.S_IMODE(target.stat().st_mode) == mode
        del codec
    finally:
        shutil.rmtree(root, ignore_errors=True)


async def test_move_keeps_bytes_and_mode(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    data = "\ufeffé\r\nline\n".encode("utf-16-le")
    (root / "doc.txt").write_bytes(b"\xff\xfe" + data)
    (root / "doc.txt").chmod(0o751)
    runtime = make_runtime(root)
    await call_tool(runtime, "read_file", {"path": "doc.txt"})
    result = await call_tool(
        runtime, "move_file", {"source_path": "doc.txt", "destination_path": "b/c.txt"}
    )
    assert not result.is_error, text_of(result)
    assert (root / "b" / "c.txt").read_bytes() == b"\xff\xfe" + data
    assert stat.S_IMODE((root / "b" / "c.txt").stat().st_mode) == 0o751
