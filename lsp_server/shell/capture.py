"""Bounded output buffers: memory stays flat even for hundreds of megabytes of output."""

from __future__ import annotations

from collections import deque


class HeadTailCapture:
    """Keeps the first and the last `limit // 2` bytes of a stream and counts the rest.

    The tail is a deque of chunks trimmed from the left, so feeding costs O(chunk) and
    memory stays under `limit` plus one chunk however much arrives.
    """

    def __init__(self, limit: int) -> None:
        self._head_limit = max(limit // 2, 1)
        self._tail_limit = max(limit - self._head_limit, 1)
        self._head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self._popped_newlines = 0
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self._tail.append(chunk)
        self._tail_size += len(chunk)
        while self._tail and self._tail_size - len(self._tail[0]) >= self._tail_limit:
            popped = self._tail.popleft()
            self._tail_size -= len(popped)
            self._popped_newlines += popped.count(b"\n")

    @property
    def dropped(self) -> int:
        """Bytes that arrived but are no longer kept (between head and tail)."""
        return self.total - len(self._head) - min(self._tail_size, self._tail_limit)

    def dropped_newlines(self) -> int:
        """Line breaks in the bytes no longer kept (0: the gap is inside one line)."""
        excess = self._tail_size - self._tail_limit
        partial = self._tail[0][:excess].count(b"\n") if excess > 0 and self._tail else 0
        return self._popped_newlines + partial

    def head(self) -> bytes:
        return bytes(self._head)

    def tail(self) -> bytes:
        data = b"".join(self._tail)
        return data[-self._tail_limit :] if len(data) > self._tail_limit else data

    def last_bytes(self, count: int) -> bytes:
        """The most recent `count` bytes (for progress lines), cheap to call often."""
        pieces: list[bytes] = []
        size = 0
        for chunk in reversed(self._tail):
            pieces.append(chunk)
            size += len(chunk)
            if size >= count:
                break
        if size < count and self.dropped == 0:
            pieces.append(bytes(self._head))
        return b"".join(reversed(pieces))[-count:]


class RollingBuffer:
    """The last `limit` bytes of a long-running job's output, addressed by absolute offset.

    Readers keep a cursor (an absolute offset); output older than the buffer is counted
    as dropped when a reader asks for it.
    """

    def __init__(self, limit: int) -> None:
        self._limit = max(limit, 1)
        self._chunks: deque[bytes] = deque()
        self._size = 0
        # Absolute offset of the first byte still kept.
        self.start = 0

    @property
    def end(self) -> int:
        return self.start + self._size

    def append(self, chunk: bytes) -> None:
        if not chunk:
            return
        self._chunks.append(chunk)
        self._size += len(chunk)
        while self._size - len(self._chunks[0]) >= self._limit:
            dropped = self._chunks.popleft()
            self._size -= len(dropped)
            self.start += len(dropped)
        excess = self._size - self._limit
        if excess > 0:
            self._chunks[0] = self._chunks[0][excess:]
            self._size -= excess
            self.start += excess

    def read_from(self, offset: int) -> tuple[bytes, int]:
        """Bytes from `offset` to the end, and how many bytes before them were dropped."""
        if offset <= self.start:
            return b"".join(self._chunks), self.start - offset
        # Join only the chunks that cover the request: readers usually want the newest bytes.
        need = self.end - offset
        pieces: list[bytes] = []
        size = 0
        for chunk in reversed(self._chunks):
            if size >= need:
                break
            pieces.append(chunk)
            size += len(chunk)
        data = b"".join(reversed(pieces))
        return data[len(data) - need :], 0


_TEXT_CONTROLS = "\0\t\n\r\x1b\b\f"  # NUL: `find -print0` separates names with it
_ODD_CONTROLS = {code: None for code in range(32) if chr(code) not in _TEXT_CONTROLS}
BINARY_SHARE = 0.3
BINARY_MIN_ODD = 8
BINARY_SAMPLE_CHARS = 65536
"""Output with at least BINARY_MIN_ODD undecodable bytes or control characters, making up
BINARY_SHARE of its first BINARY_SAMPLE_CHARS characters, is not text (a binary file sent
to stdout, `head -c 100 /dev/urandom`)."""


def shown_text(data: bytes) -> str:
    """Output as the model reads it: the text, or for bytes that are not text a note that
    says so and how to look at them. Their U+FFFD and control characters would cost
    tokens and say nothing. A few odd bytes in text (`find -print0`) stay."""
    text = data.decode("utf-8", "replace")
    sample = text[:BINARY_SAMPLE_CHARS]  # what it is shows at the start; 8 MB need no count
    odd = sample.count("\ufffd") + len(sample) - len(sample.translate(_ODD_CONTROLS))
    if odd < BINARY_MIN_ODD or odd <= len(sample) * BINARY_SHARE:
        return text
    return (
        f"[{len(data)} bytes of output, mostly binary (not text): not shown. To look at them, "
        "write them to a file (`... > out.bin`) and run `file out.bin` or `xxd out.bin | head`]"
    )
