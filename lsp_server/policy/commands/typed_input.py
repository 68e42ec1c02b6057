"""Text typed into a running program (job_input), as the policy judges it.

Typed into a shell or an interpreter, text is code: it is judged as the shell command it
amounts to, under the same rules as a bash call (`rm -rf x` typed into `bash` is `rm -rf
x`). Typed into any other program it is data and needs no judgement.

What each interpreter's text amounts to (a row of INTERPRETERS):
- a shell (bash, sh, zsh, ssh ...): the text itself.
- Python: the commands it hands to a shell where they are plain string literals
  (`os.system('touch X')`, `subprocess.run(['rm', '-rf', 'x'])`, `os.popen(...)`), then
  `python3 -c CODE` for the rest, which no rule can read: in the sandbox it runs there,
  outside it asks, and where a deny rule exists it always asks.
- other interpreters (node, ruby, perl, psql, sqlite3 ...): `PROGRAM -e CODE` (their own
  inline-code option), plus the shell escapes of SQL shells (`\\! cmd`, `.shell cmd`).

Limits: a command built at run time (`os.system(f"rm {x}")`, `getattr(os, 'sys' +
'tem')`) is not extracted, only judged as opaque code; a program that runs what it reads
as code but is not in the table (a custom REPL, `make shell`'s own prompt) has its input
judged as data unless the process reading is itself one of the table's programs.
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Sequence
from pathlib import PurePosixPath

import attrs


@attrs.frozen
class Interpreter:
    names: re.Pattern[str]
    kind: str
    """shell | python | code | sql"""
    inline: str
    """How its code is written on a command line: `PROGRAM OPTION CODE`."""
    batch: frozenset[str] = frozenset()
    """Options that make it run something else than what it reads (a script, -c)."""


INTERPRETERS: tuple[Interpreter, ...] = (
    Interpreter(re.compile(r"(ba|da|z|k|mk|a|fi|tc|c|yash|busybox|)sh|ssh|su|sudo"), "shell", "-c"),
    Interpreter(re.compile(r"(python|pypy)[0-9.]*|ipython[0-9]*"), "python", "-c"),
    Interpreter(re.compile(r"node|nodejs|deno|bun"), "code", "-e"),
    Interpreter(re.compile(r"ruby[0-9.]*|irb"), "code", "-e"),
    Interpreter(re.compile(r"perl[0-9.]*"), "code", "-e"),
    Interpreter(re.compile(r"php[0-9.]*"), "code", "-r"),
    Interpreter(re.compile(r"lua[0-9.]*|luajit"), "code", "-e"),
    Interpreter(re.compile(r"R|julia|ghci|scala|clojure|erl|iex|tclsh[0-9.]*"), "code", "-e"),
    Interpreter(
        re.compile(r"psql|mysql|mariadb|sqlite3|duckdb"),
        "sql",
        "-c",
        frozenset(("-c", "--command", "-f", "--file", "-e", "--execute")),
    ),
)
_SHELL_CALLS = frozenset(
    (
        "system",
        "popen",
        "run",
        "call",
        "check_call",
        "check_output",
        "getoutput",
        "getstatusoutput",
        "Popen",
    )
)
_SQL_ESCAPE = re.compile(r"^\s*(?:\\!|\.shell\b|\.system\b|system\b)\s*(.+)$", re.MULTILINE)


def interpreter_of(argv: Sequence[str]) -> tuple[Interpreter, str] | None:
    """The row of a program that reads code from its input, and its name; None for a
    program whose input is data (or an interpreter running a script or -c code)."""
    if not argv:
        return None
    name = PurePosixPath(argv[0]).name
    row = next((r for r in INTERPRETERS if r.names.fullmatch(name)), None)
    if row is None:
        return None
    args = list(argv[1:])
    if "-i" in args or "--interactive" in args:
        return row, name
    if row.kind == "sql":
        return None if any(a.split("=")[0] in row.batch for a in args) else (row, name)
    if name in ("ssh", "su", "sudo"):
        return (row, name) if _interactive_wrapper(name, args) else None
    for arg in args:
        if arg in ("-c", "-e", "-r", "-m", "-E", "-p"):
            return None  # code or a module given on the command line
        if not arg.startswith("-"):
            return None if arg != "-" else (row, name)  # a script file
    return row, name


def _interactive_wrapper(name: str, args: list[str]) -> bool:
    """`ssh host` (no remote command), `su`, `sudo -s`/`sudo -i`/`sudo bash`."""
    positional = [a for a in args if not a.startswith("-")]
    if name == "ssh":
        return len(positional) <= 1
    if name == "su":
        return "-c" not in args
    return any(a in ("-s", "-i") for a in args)


def _literal_words(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
    ):
        return shlex.join(str(e.value) for e in node.elts if isinstance(e, ast.Constant))
    return None


def python_commands(code: str) -> list[str]:
    """The shell commands Python code hands over as literals (os.system('...'),
    subprocess.run([...]) ...)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in _SHELL_CALLS:
            words = _literal_words(node.args[0])
            if words is not None:
                found.append(words)
    return found


def judged_command(argv: Sequence[str], text: str) -> str | None:
    """The shell command `text` typed into the program `argv` amounts to; None: data."""
    found = interpreter_of(argv)
    if found is None:
        return None
    row, name = found
    code = text.rstrip("\n")
    if not code.strip():
        return None
    if row.kind == "shell":
        return code
    inline = f"{shlex.quote(name)} {row.inline} {shlex.quote(code)}"
    if row.kind == "python":
        return "; ".join([*python_commands(code), inline])
    if row.kind == "sql":
        escapes = [m.strip() for m in _SQL_ESCAPE.findall(code)]
        return "; ".join([*escapes, inline])
    return inline
