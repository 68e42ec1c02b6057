"""The agent's terminal/* requests, on toolhost's shell.

create         -> bash with run_in_background (policy, the sandbox, the checkpoint of the
                  command, the audit line); the job is the terminal
output         -> the job's output so far (the last `outputByteLimit` bytes), exit status
wait_for_exit  -> until the job has ended and its checkpoint is closed
kill           -> the job's process group is stopped; the terminal stays readable
release        -> killed if still running, then forgotten

ACP has no request that sends input to a terminal. A program that waits for input (as
bash's prompt detection sees it: shell/prompts.py) gets the end of its input instead, and
its output says what it asked, so the agent can run it another way.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import shlex
import signal
from pathlib import PurePosixPath
from typing import Any

import attrs

from lsp_server.acp.calls import call, text_param
from lsp_server.acp.replies import refuse
from lsp_server.acp.workspaces import Served
from lsp_server.core import errors
from lsp_server.core.errors import ToolError
from lsp_server.shell.jobs import Job, JobManager

CREATE = "terminal/create"
OUTPUT = "terminal/output"
WAIT_FOR_EXIT = "terminal/wait_for_exit"
KILL = "terminal/kill"
RELEASE = "terminal/release"
METHODS = (CREATE, OUTPUT, WAIT_FOR_EXIT, KILL, RELEASE)

_STARTED = re.compile(r'Started background job "([^"]+)"')
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WAIT_STEP_SECONDS = 30.0
_ASKED_STEP_SECONDS = 0.5
_EOF_TRIES = 3


@attrs.define(eq=False)
class Terminal:
    served: Served
    session_id: str
    job: Job
    byte_limit: int | None
    watcher: asyncio.Task[None] | None = None


class Terminals:
    def __init__(self) -> None:
        self._terminals: dict[str, Terminal] = {}
        self._ids = itertools.count(1)

    async def handle(self, method: str, served: Served, session_id: str, params: Any) -> Any:
        if method == CREATE:
            return await self.create(served, session_id, params)
        terminal = self._find(params, session_id)
        if method == OUTPUT:
            return output(terminal)
        if method == WAIT_FOR_EXIT:
            while terminal.job.finished_at is None:  # after its checkpoint closed
                await terminal.job.wait_change(_WAIT_STEP_SECONDS)
            return exit_status(terminal.job)
        if method == KILL:
            await _manager(terminal.served).kill(terminal.job, "killed by the agent")
            return {}
        # RELEASE
        await _manager(terminal.served).kill(terminal.job, "released by the agent")
        if terminal.watcher is not None:
            terminal.watcher.cancel()
        self._terminals.pop(params["terminalId"], None)
        return {}

    async def create(self, served: Served, session_id: str, params: dict[str, Any]) -> Any:
        line = command_line(params)
        cwd = params.get("cwd")
        if isinstance(cwd, str):  # the shell's own folder stays inside the workspace too
            try:
                served.runtime.workspace.resolve(cwd, "write")
            except ToolError as exc:
                raise refuse(exc.code, exc.cause, exc.recovery) from None
        result = await call(
            served,
            session_id,
            "bash",
            {"command": line, "run_in_background": True, "description": "ACP terminal"},
            "full",
        )
        text = result.content[0]["text"] if result.content else ""
        found = _STARTED.search(text)
        job = _manager(served).get(found.group(1)) if found else None
        if job is None:
            raise refuse(errors.INTERNAL_ERROR, f"the job did not start: {text}", "run it again")
        limit = params.get("outputByteLimit")
        terminal_id = f"term-{next(self._ids)}"
        byte_limit = limit if isinstance(limit, int) and limit >= 0 else None
        terminal = Terminal(served, session_id, job, byte_limit)
        terminal.watcher = asyncio.create_task(end_input_when_asked(job, _manager(served)))
        self._terminals[terminal_id] = terminal
        return {"terminalId": terminal_id}

    def _find(self, params: dict[str, Any], session_id: str) -> Terminal:
        terminal_id = text_param(params, "terminalId", "terminal/*")
        terminal = self._terminals.get(terminal_id)
        if terminal is None or terminal.session_id != session_id:
            raise refuse(
                errors.JOB_NOT_FOUND,
                f"no terminal {terminal_id!r} in this session (released, or never created)",
                "create a terminal with terminal/create",
            )
        return terminal

    async def release_all(self) -> None:
        for terminal in self._terminals.values():
            await _manager(terminal.served).kill(terminal.job, "the ACP connection closed")
            if terminal.watcher is not None:
                terminal.watcher.cancel()
        self._terminals.clear()


async def end_input_when_asked(job: Job, manager: JobManager) -> None:
    """While the job runs: when it waits for input, say in its output what it asked and
    type the end of input (ctrl-d); after a few tries, stop it."""
    tries = 0
    while job.running:
        await job.wait_change(_ASKED_STEP_SECONDS)
        if await job.waiting_for_input() is None or job.stdin is None:
            continue
        tries += 1
        if tries > _EOF_TRIES:
            await manager.kill(job, "it kept waiting for input, which ACP terminals cannot send")
            return
        if tries == 1:
            note = (
                f"\n[toolhost: the program waits for input: `{job.prompt()}`; ACP terminals "
                "cannot send input, so its input was closed. Give the answer on the command "
                "line (an option, a here-string, `yes |`) and run it again]\n"
            )
            job.feed(note.encode())
        job.stdin.write(b"\x04")
        job.quiet.touch()


def command_line(params: dict[str, Any]) -> str:
    """`command` and `args` as one bash line, after `cd` to `cwd` and the `env` exports."""
    command = text_param(params, "command", CREATE)
    args = params.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise _invalid("`args` must be an array of strings")
    line = shlex.join([command, *args]) if args else command
    prefix: list[str] = []
    cwd = params.get("cwd")
    if cwd is not None:
        if not isinstance(cwd, str) or not PurePosixPath(cwd).is_absolute():
            raise _invalid(f"`cwd` must be an absolute path, not {cwd!r}")
        prefix.append(f"cd -- {shlex.quote(cwd)}")
    for variable in params.get("env") or []:
        name = variable.get("name") if isinstance(variable, dict) else None
        value = variable.get("value") if isinstance(variable, dict) else None
        if not isinstance(name, str) or not _ENV_NAME.fullmatch(name) or not isinstance(value, str):
            raise _invalid(f"`env` entries are {{name, value}} strings; got {variable!r}")
        prefix.append(f"export {name}={shlex.quote(value)}")
    return " && ".join([*prefix, line]) if prefix else line


def output(terminal: Terminal) -> dict[str, Any]:
    job = terminal.job
    data, dropped = job.output.read_from(job.output.start)
    truncated = dropped > 0 or job.output.start > 0
    # Secrets replaced before the cut, so that the cut never leaves half of one.
    text = terminal.served.runtime.secrets.redact(data.decode("utf-8", "replace"))
    limit = terminal.byte_limit
    if limit is not None and len(text) > limit // 4 and len(encoded := text.encode()) > limit:
        data = encoded[len(encoded) - limit :]
        while data and (data[0] & 0xC0) == 0x80:  # never start inside a character
            data = data[1:]
        text = data.decode("utf-8", "replace")
        truncated = True
    answer: dict[str, Any] = {"output": text, "truncated": truncated}
    if not job.running:
        answer["exitStatus"] = exit_status(job)
    return answer


def exit_status(job: Job) -> dict[str, Any]:
    code = job.exit_code
    if code is not None and code < 0:
        return {"exitCode": None, "signal": _signal_name(-code)}
    if code is None and job.status == "killed":
        return {"exitCode": None, "signal": "SIGKILL"}
    return {"exitCode": code, "signal": None}


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _manager(served: Served) -> JobManager:
    manager: JobManager = served.runtime.services.get(JobManager)
    return manager


def _invalid(cause: str) -> Exception:
    return refuse(errors.INVALID_ARGUMENT, cause, "send terminal/create as ACP gives it", -32602)
