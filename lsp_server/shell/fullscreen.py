"""Full-screen programs: they need a terminal, which a bash call has only with `terminal:
true`; without one they would wait until the timeout. Found before the command runs (a row
per program), refused with what to do.
"""

from __future__ import annotations

from pathlib import PurePosixPath

import attrs

from lsp_server.shellparse.shell_words import split_command

# Wrappers that run the next word as the program; value: options that take an argument.
_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset(("-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U")),
    "doas": frozenset(("-u", "-C")),
    "env": frozenset(("-u", "--unset", "-C", "--chdir", "-S", "--split-string")),
    "nice": frozenset(("-n", "--adjustment")),
    "nohup": frozenset(),
    "setsid": frozenset(),
    "time": frozenset(("-f", "--format", "-o", "--output")),
    "command": frozenset(),
    "exec": frozenset(("-a",)),
    "stdbuf": frozenset(("-i", "-o", "-e")),
    "timeout": frozenset(("-s", "--signal", "-k", "--kill-after")),
    "xargs": frozenset(("-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--delimiter")),
}
_TAKES_POSITIONAL = frozenset(("timeout",))  # timeout DURATION COMMAND


@attrs.frozen
class FullScreen:
    names: tuple[str, ...]
    batch_words: tuple[str, ...]
    """Any of these arguments makes the program run without a screen."""
    instead: str
    batch_letters: str = ""
    """Short options that do the same inside a cluster (top -bn1)."""


_EDIT = "read files with read_file and change them with edit_file or write_file"
FULL_SCREEN: tuple[FullScreen, ...] = (
    FullScreen(
        ("vi", "vim", "view", "vimdiff", "nvim", "ex"),
        ("-es", "-Es", "--headless", "--version", "-h", "--help"),
        f"{_EDIT} (scripted edits: `vim -es` or `nvim --headless`)",
    ),
    FullScreen(
        ("emacs",),
        ("--batch", "-batch", "--script", "--version", "--help"),
        f"{_EDIT} (scripted edits: `emacs --batch`)",
    ),
    FullScreen(("nano", "pico", "micro", "joe", "jed", "mcedit"), ("--version", "--help"), _EDIT),
    FullScreen(("top",), ("-v", "-h"), "`top -b -n 1` prints one snapshot", batch_letters="b"),
    FullScreen(
        ("htop", "btop", "atop", "glances", "nmon"),
        ("--version", "--help", "-h"),
        "`top -b -n 1` or `ps aux` print a snapshot",
    ),
    FullScreen(
        ("watch",),
        ("--version", "--help", "-h", "-v"),
        "run the command itself, or loop it in a background job (run_in_background)",
    ),
    FullScreen(
        ("tig", "lazygit", "mc", "ranger", "nnn", "vifm", "ncdu"),
        ("--version", "--help", "-h", "-o"),
        "use the plain command-line tools (git log, ls, du) instead",
    ),
)
_BY_NAME = {name: row for row in FULL_SCREEN for name in row.names}


def _is_assignment(word: str) -> bool:
    name, equals, _ = word.partition("=")
    return bool(equals) and name.isidentifier()


def _program(words: tuple[str, ...]) -> tuple[str, tuple[str, ...]] | None:
    """The program a simple command runs, past assignments and wrappers, and its args."""
    index = 0
    while index < len(words) and _is_assignment(words[index]):
        index += 1
    while index < len(words):
        name = PurePosixPath(words[index]).name
        takes = _WRAPPERS.get(name)
        if takes is None:
            return name, words[index + 1 :]
        index += 1
        while index < len(words) and words[index].startswith("-"):
            index += 2 if words[index] in takes else 1
        while name == "env" and index < len(words) and _is_assignment(words[index]):
            index += 1
        if name in _TAKES_POSITIONAL:
            index += 1
    return None


def _is_batch(row: FullScreen, args: tuple[str, ...]) -> bool:
    for arg in args:
        if arg in row.batch_words:
            return True
        cluster = arg.startswith("-") and not arg.startswith("--")
        if cluster and any(letter in arg[1:] for letter in row.batch_letters):
            return True
    return False


def needs_terminal(command: str) -> str | None:
    """Why the command cannot run here (it starts a full-screen program), or None."""
    for segment in split_command(command).segments:
        found = _program(segment.words)
        if found is None:
            continue
        name, args = found
        row = _BY_NAME.get(name)
        if row is not None and not _is_batch(row, args):
            return (
                f"`{name}` is a full-screen program: it needs a terminal, and this bash call "
                "has none (TERM=dumb), so it would only wait until the timeout. Not run. "
                f"Instead: {row.instead}; or pass terminal: true to run it on a 120x40 "
                "screen and drive it with job_input."
            )
    return None
