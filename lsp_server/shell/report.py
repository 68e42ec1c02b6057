"""What the model reads after a command: output, exit status, and every fact that
changes how it should read them (dropped bytes, processes killed or left running)."""

from __future__ import annotations

from lsp_server.shell.processes import ProcessInfo
from lsp_server.shell.runner import CommandResult, describe_exit

_LISTED = 5


def _names(found: list[ProcessInfo]) -> str:
    shown = "; ".join(p.describe() for p in found[:_LISTED])
    more = len(found) - _LISTED
    return shown + (f"; and {more} more" if more > 0 else "")


def _count(found: list[ProcessInfo]) -> str:
    return f"{len(found)} process" + ("" if len(found) == 1 else "es")


def leftover_note(result: CommandResult, pipe_wait_seconds: float) -> str | None:
    found = result.leftovers
    if result.timed_out:
        return None  # the timeout error itself says the whole group was stopped
    if not found:
        if result.pipe_held:
            return (
                f"[stopped waiting for output {pipe_wait_seconds:g} s after the command ended: "
                "a process outside it still holds its output pipe]"
            )
        return None
    if result.daemonised and result.leftovers_killed:
        return (
            f"[the command daemonised (nohup/setsid/disown) {_count(found)}; killed them: "
            f"{_names(found)}. Start long-running programs with run_in_background instead]"
        )
    if result.daemonised:
        return (
            f"[left running {_count(found)} the command daemonised (shell.kill_daemons is "
            f"off); toolhost does not manage them: {_names(found)}]"
        )
    return (
        f"[killed {_count(found)} still running after the command ended: {_names(found)}. "
        "Start long-running programs with run_in_background]"
    )


def truncation_note(result: CommandResult) -> str | None:
    if result.dropped_bytes == 0:
        return None
    return (
        f"[output was {result.total_bytes} bytes: {result.dropped_bytes} bytes in the middle "
        "were not kept (see the marker above); redirect to a file and read it in parts, "
        "or filter with grep/head/tail]"
    )


def command_report(result: CommandResult, pipe_wait_seconds: float, extra: list[str]) -> str:
    """Output (or "(no output)"), then the exit status, then notes; one note per line."""
    output = result.output
    if not output:
        output = "(no output)\n"
    elif not output.endswith("\n"):
        output += "\n"
    lines = [f"[{describe_exit(result.exit_code)}]"] if not result.timed_out else []
    for note in (truncation_note(result), leftover_note(result, pipe_wait_seconds), *extra):
        if note:
            lines.append(note)
    return output + "\n".join(lines)
