"""A program in a pseudo-terminal, read as a screen (pyte), driven by keys: how a person sees
and answers an agent's interactive UI."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import signal
import struct
import termios
import threading
import time
from pathlib import Path

import pyte

KEYS = {
    "enter": "\r",
    "up": "\x1b[A",
    "down": "\x1b[B",
    "right": "\x1b[C",
    "left": "\x1b[D",
    "space": " ",
    "esc": "\x1b",
}


class LenientScreen(pyte.Screen):
    """pyte's screen, ignoring the private SGR sequences (`ESC [ > 4 ; 2 m`, xterm's
    modifyOtherKeys) that Gemini CLI's UI sends and pyte 0.8.2 cannot take."""

    def select_graphic_rendition(self, *attrs: int, private: bool = False) -> None:
        if not private:
            super().select_graphic_rendition(*attrs)


class TerminalScreen:
    """`argv` started in a new pseudo-terminal (its controlling terminal) of cols x rows."""

    def __init__(
        self, argv: list[str], *, env: dict[str, str], cwd: Path, cols: int = 120, rows: int = 50
    ) -> None:
        self.screen = LenientScreen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.changed = threading.Condition()
        self.closed = False
        pid, fd = pty.fork()
        if pid == 0:  # the child: exec at once (nothing else runs after fork)
            try:
                os.chdir(cwd)
                os.execvpe(argv[0], argv, env | {"TERM": "xterm-256color"})
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while True:
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if not ready:
                continue
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                data = b""
            with self.changed:
                if not data:
                    self.closed = True
                    self.changed.notify_all()
                    return
                self.stream.feed(data)
                self.changed.notify_all()

    def text(self) -> str:
        with self.changed:
            return "\n".join(line.rstrip() for line in self.screen.display)

    def wait_for(self, *needles: str, timeout: float = 90) -> str:
        """The screen once every needle is on it; AssertionError with the screen if not."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                shown = "\n".join(line.rstrip() for line in self.screen.display)
                if all(needle in shown for needle in needles):
                    return shown
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    raise AssertionError(f"{needles} not on the screen:\n{shown}")
                self.changed.wait(min(left, 1.0))

    def wait_gone(self, needle: str, timeout: float) -> bool:
        """Whether `needle` left the screen within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while needle in "\n".join(self.screen.display):
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    return False
                self.changed.wait(min(left, 1.0))
            return True

    def press_until_gone(self, key: str, needle: str, tries: int = 3) -> None:
        """Press `key` until `needle` leaves the screen, as a person presses a key again
        when a busy UI did not take it (Ink drops a key now and then while it redraws)."""
        for _ in range(tries):
            self.press(key)
            if self.wait_gone(needle, 10):
                return
        shown = self.text()
        raise AssertionError(f"{needle!r} still on the screen after {tries} x {key}:\n{shown}")

    def press(self, *keys: str) -> None:
        """Keys by name (KEYS) or literal text, one write each, as a person types them."""
        for key in keys:
            os.write(self.fd, KEYS.get(key, key).encode())
            time.sleep(0.15)

    def close(self) -> None:
        """Stop the program and everything in its process group (pty.fork made it a group
        leader), politely first."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, sig)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                if os.waitpid(self.pid, os.WNOHANG)[0]:
                    os.close(self.fd)
                    return
                time.sleep(0.1)
        os.waitpid(self.pid, 0)
        os.close(self.fd)
