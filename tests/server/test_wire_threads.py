"""The LSP face's writers (stdio's CoalescingWriter, TCP's socket writer) are written to by
pygls from whichever thread sends: a log record forwarded from a worker thread, a didCall or
progress of a call run in a thread. Only the loop's thread may touch the pending messages,
the stream and asyncio's transport: a message from another thread is handed to the loop and
goes out whole, in the order the loop receives it."""

from __future__ import annotations

import asyncio
import io
import threading
from typing import Any

from lsp_server.server.tcp import _SocketWriter
from lsp_server.server.transport import CoalescingWriter


class RecordingStream(io.BytesIO):
    def __init__(self) -> None:
        super().__init__()
        self.threads: set[int] = set()

    def write(self, data: Any) -> int:
        self.threads.add(threading.get_ident())
        return super().write(data)


async def test_a_message_from_another_thread_is_written_by_the_loop() -> None:
    stream = RecordingStream()
    writer = CoalescingWriter(stream)  # type: ignore[arg-type]
    writer.write(b"first;")
    await asyncio.sleep(0)  # flushed: nothing is pending when the worker writes
    sender = threading.Thread(target=lambda: [writer.write(b"x%d;" % i) for i in range(200)])
    sender.start()
    sender.join()
    writer.write(b"last;")
    for _ in range(5):
        await asyncio.sleep(0)
    sent = stream.getvalue().split(b";")[:-1]
    assert stream.threads == {threading.get_ident()}
    # Each sender's messages in its own order, none lost or doubled; the loop's own "last"
    # was queued before the worker's messages reached the loop.
    assert sent == [b"first", b"last", *(b"x%d" % i for i in range(200))]


class RecordingTransport:
    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.threads: set[int] = set()

    def is_closing(self) -> bool:
        return False

    def write(self, data: bytes) -> None:
        self.threads.add(threading.get_ident())
        self.written.append(data)


async def test_the_tcp_writer_hands_another_threads_message_to_the_loop() -> None:
    transport = RecordingTransport()
    writer = _SocketWriter(transport)  # type: ignore[arg-type]
    sender = threading.Thread(target=writer.write, args=(b"from a worker",))
    sender.start()
    sender.join()
    assert transport.written == []  # not written from the worker's thread
    await asyncio.sleep(0)
    assert transport.written == [b"from a worker"]
    assert transport.threads == {threading.get_ident()}
