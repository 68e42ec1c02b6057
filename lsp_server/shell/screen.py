"""A terminal command's output as the model reads it: the screen, control sequences
rendered away (pyte), with the lines that scrolled off above it."""

from __future__ import annotations

import pyte

from lsp_server.shell.terminal import COLUMNS, ROWS

HISTORY_LINES = 2000


class Screen:
    """What a terminal of COLUMNS x ROWS shows after the bytes fed so far."""

    def __init__(self) -> None:
        self._screen = pyte.HistoryScreen(COLUMNS, ROWS, history=HISTORY_LINES)
        self._screen.set_mode(pyte.modes.LNM)  # a bare "\n" starts a new line, as ONLCR does
        self._stream = pyte.ByteStream(self._screen)

    def feed(self, data: bytes) -> None:
        self._stream.feed(data)

    def rows(self) -> list[str]:
        """The visible screen, trailing blanks dropped."""
        lines = [line.rstrip() for line in self._screen.display]
        while lines and not lines[-1]:
            lines.pop()
        return lines

    def text(self, scrollback: bool = True) -> str:
        """The screen (and what scrolled off above it) as text."""
        above: list[str] = []
        if scrollback:
            for row in self._screen.history.top:
                above.append("".join(row[column].data for column in range(COLUMNS)).rstrip())
        return "\n".join([*above, *self.rows()])

    def cursor_line(self) -> str:
        """The line the cursor is on: where a prompt waits."""
        y = self._screen.cursor.y
        return self._screen.display[y].rstrip() if 0 <= y < ROWS else ""


def render(data: bytes) -> str:
    """A finished terminal command's output: what its terminal showed."""
    screen = Screen()
    screen.feed(data)
    return screen.text()
