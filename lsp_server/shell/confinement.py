"""What a command runs under: the sandbox's launcher (or, without one, a parent-death
signal: lsp_server.procs.children).

A sandboxed command's processes live in a PID namespace that ends with the command's
shell, so they cannot be found from outside once it has exited. The shell's EXIT trap
therefore lists what is still running, from inside, into the command's state folder just
before it exits; the runner names them in the result (they die with the namespace).
"""

from __future__ import annotations

import shlex
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import attrs

from lsp_server.procs.children import LEFTOVERS_NAME
from lsp_server.shell.processes import ProcessInfo


class Launcher(Protocol):
    """Wraps a command's argv so that it runs confined or supervised (lsp_server.sandbox);
    either way its leftovers are listed in the state folder when its main process ends."""

    @property
    def namespace(self) -> bool:
        """True: a PID namespace of its own (the shell's EXIT trap lists leftovers)."""
        ...

    def wrap(
        self, argv: Sequence[str], cwd: Path, state_dir: Path, keep_daemons: bool = False
    ) -> list[str]: ...

    def release(self, state_dir: Path) -> None:
        """The command of `state_dir` ended: let go of what `wrap` held for it (the
        sandbox's placeholders of protected names)."""
        ...


@attrs.frozen
class CommandState:
    """The command's own folder: where its shell records its final folder and leftovers."""

    folder: Path

    @classmethod
    def create(cls) -> CommandState:
        return cls(Path(tempfile.mkdtemp(prefix="toolhost-cmd-")))

    @property
    def cwd_file(self) -> Path:
        return self.folder / "cwd"

    @property
    def leftovers_file(self) -> Path:
        return self.folder / LEFTOVERS_NAME

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def end_command(state: CommandState, launcher: Launcher | None) -> None:
    """The command ended: the launcher lets go of what it held for it, its folder goes."""
    try:
        if launcher is not None:
            launcher.release(state.folder)
    finally:
        state.remove()


def exit_trap(state: CommandState, list_leftovers: bool) -> str:
    """The EXIT trap: record the final folder and, inside a PID namespace, every other live
    process (pid pgid sid command line). Builtins only: no fork on the way out."""
    body = "pwd -P > " + shlex.quote(str(state.cwd_file))
    if list_leftovers:
        body += (
            "; local d p s st pg sid; local -a a"
            "; for d in /proc/[0-9]*; do p=${d#/proc/}"
            '; [[ $p == 1 || $p == "$$" || $p == "$PPID" ]] && continue'
            '; { read -r s < "$d/stat"; } 2>/dev/null || continue'
            '; read -r st _ pg sid _ <<< "${s##*) }"'
            "; [[ $st == Z || $st == X ]] && continue"
            '; a=(); { mapfile -d "" -t a < "$d/cmdline"; } 2>/dev/null'
            '; printf "%s %s %s %s\\n" "$p" "$pg" "$sid" "${a[*]}"'
            "; done > " + shlex.quote(str(state.leftovers_file))
        )
    return f"__toolhost_exit() {{ {body}; }}; trap __toolhost_exit EXIT; "


def read_leftovers(state: CommandState) -> list[ProcessInfo]:
    """The processes the trap found still running (pids as the command saw them)."""
    try:
        text = state.leftovers_file.read_text(errors="replace")
    except OSError:
        return []
    found: list[ProcessInfo] = []
    for line in text.splitlines():
        parts = line.split(" ", 3)
        if len(parts) < 3 or not all(p.lstrip("-").isdigit() for p in parts[:3]):
            continue
        command = parts[3] if len(parts) == 4 and parts[3] else "?"
        if "__toolhost_exit()" in command:  # forked, not yet exec'd: our own script
            command = "bash (a subshell of the command)"
        found.append(ProcessInfo(int(parts[0]), int(parts[1]), int(parts[2]), command[:160]))
    return found
