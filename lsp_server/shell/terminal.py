"""The input side of a command, held by toolhost: a pseudo-terminal.

Every command toolhost starts for a job (and every foreground command, until it ends) reads
from a pseudo-terminal whose master end toolhost keeps, so a program that asks something
blocks on it (shell/waiting.py sees that) and can be answered (`job_input`). A plain
command gets the terminal as stdin only: its output still goes to the pipe, exactly as
before; what the terminal echoes of typed input joins that output. A `terminal: true`
command gets it as stdin, stdout and stderr, and its output is read as a screen
(shell/screen.py). The size is fixed: COLUMNS x ROWS.

The terminal is nobody's controlling terminal (commands run in sessions of their own), so
`ctrl-c` is sent as SIGINT to the command's processes as well as typed.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import struct
import termios

COLUMNS = 120
ROWS = 40
TERM = "xterm-256color"
TERMINAL_ENVIRONMENT = {"TERM": TERM, "COLUMNS": str(COLUMNS), "LINES": str(ROWS)}
"""What a `terminal: true` command's environment says instead of TERM=dumb."""

KEYS: dict[str, bytes] = {
    "enter": b"\r",
    "ctrl-c": b"\x03",
    "ctrl-d": b"\x04",
    "tab": b"\t",
    "up": b"\x1b[A",
    "down": b"\x1b[B",
    "esc": b"\x1b",
}
"""The named keys `job_input` sends, as a terminal sends them."""


class CommandInput:
    """A command's pseudo-terminal: `slave` goes to the command, toolhost writes into and
    reads the echo from `master`."""

    def __init__(self, terminal: bool) -> None:
        self.terminal = terminal
        self.master, self.slave = os.openpty()
        size = struct.pack("HHHH", ROWS, COLUMNS, 0, 0)
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, size)
        if not terminal:
            # The echo of typed input joins plain output: "\n", not the terminal's "\r\n".
            attributes = termios.tcgetattr(self.slave)
            attributes[1] &= ~termios.OPOST
            termios.tcsetattr(self.slave, termios.TCSANOW, attributes)
        os.set_blocking(self.master, False)
        status = os.fstat(self.slave)
        self.identity = ((status.st_dev, status.st_ino), (-1, status.st_rdev))
        """What the command's stdin is, as /proc/PID/fd/N of its processes shows it (and
        as /dev/tty, where it became their controlling terminal)."""
        self.typed = 0
        """How many times input was typed (a count that marks where the program's answer
        to it begins)."""
        self._closed = False

    def reader(self) -> int:
        """A descriptor of the master end for the output reader (which closes it)."""
        return os.dup(self.master)

    def started(self) -> None:
        """The command has its copy of the slave end: toolhost lets go of its own, so the
        reader sees the end when the command's last process closes it."""
        with contextlib.suppress(OSError):
            os.close(self.slave)
        self.slave = -1

    @property
    def open(self) -> bool:
        return not self._closed

    def write(self, data: bytes) -> int:
        """Type `data`; returns how many bytes the terminal took (it holds about 4 KiB of
        a line that the program has not read yet)."""
        if self._closed:
            return 0
        self.typed += 1
        written = 0
        while written < len(data):
            try:
                written += os.write(self.master, data[written : written + 1024])
            except BlockingIOError:
                break
            except OSError:
                break
        return written

    def echo_off(self) -> bool:
        """The program turned echo off but still reads whole lines: a password prompt
        (getpass, sudo, ssh). Line editors (readline) turn off both and are not one."""
        if self._closed:
            return False
        try:
            lflag = termios.tcgetattr(self.master)[3]
        except (termios.error, OSError):
            return False
        return not lflag & termios.ECHO and bool(lflag & termios.ICANON)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for fd in (self.master, self.slave):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
