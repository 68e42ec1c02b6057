"""The bounded buffers: what they keep is exactly the head and tail of what arrived."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lsp_server.shell.capture import HeadTailCapture, RollingBuffer
from lsp_server.shell.runner import decode_capture

chunks = st.lists(st.binary(min_size=0, max_size=300), max_size=40)


@given(chunks, st.integers(min_value=2, max_value=500))
def test_head_tail_capture_keeps_head_and_tail(parts: list[bytes], limit: int) -> None:
    capture = HeadTailCapture(limit)
    for part in parts:
        capture.feed(part)
    data = b"".join(parts)
    assert capture.total == len(data)
    head, tail = capture.head(), capture.tail()
    assert data.startswith(head)
    assert data.endswith(tail)
    assert len(head) + len(tail) <= limit
    assert capture.dropped == len(data) - len(head) - len(tail)
    assert capture.dropped_newlines() == data[len(head) : len(data) - len(tail)].count(b"\n")
    if len(data) <= limit:
        assert head + tail == data
    if capture.dropped == 0 or len(tail) >= 10:
        assert capture.last_bytes(10) == data[-10:]


@given(chunks, st.integers(min_value=1, max_value=500), st.integers(min_value=0, max_value=9000))
def test_rolling_buffer_reads_from_any_offset(parts: list[bytes], limit: int, cursor: int) -> None:
    buffer = RollingBuffer(limit)
    for part in parts:
        buffer.append(part)
    data = b"".join(parts)
    cursor = min(cursor, len(data))
    assert buffer.end == len(data)
    assert buffer.end - buffer.start <= limit
    kept, dropped = buffer.read_from(cursor)
    assert data[cursor:].endswith(kept)
    assert dropped == max(buffer.start - cursor, 0)
    assert dropped + len(kept) == len(data) - cursor


def test_a_gap_inside_one_line_is_named_on_that_line() -> None:
    capture = HeadTailCapture(100)
    for _ in range(100):
        capture.feed(b"a" * 100)
    text = decode_capture(capture)
    assert "\n" not in text
    assert (
        text
        == "a" * 50
        + " [... 9900 bytes of this line dropped here (the first 50 and the "
        + ("last 50 are kept) ...] " + "a" * 50)
    )
    capture.feed(b"\n" * 3 + b"b" * 100)
    assert "bytes of output dropped here (3 line breaks)" in decode_capture(capture)
