"""`toolhost acp`: between the editor (our stdin/stdout) and the agent (our child).

Every message passes through unchanged (ids, `_meta`, unknown methods and fields) except:
`initialize` and `session/new|load` on their way to the agent (rewrites.py), and the agent's
fs/* and terminal/* requests, which toolhost answers itself (files.py, terminals.py). Where
policy asks, toolhost sends its own `session/request_permission` to the editor (ids
`toolhost-N`). A line that is not JSON-RPC gets an error; the connection stays up. When the
agent dies, the editor's waiting requests (and later ones) get an `acp.agent_exited` error, its
terminals' commands are stopped, and the editor connection stays open until the editor
closes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
from pathlib import Path, PurePosixPath
from typing import Any

import anyio

from lsp_server.acp import files, rewrites, terminals
from lsp_server.acp.calls import params_of, text_param
from lsp_server.acp.ndjson import (
    AGENT_GONE,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    LineReader,
    Malformed,
    Message,
    error_reply,
    result_reply,
)
from lsp_server.acp.peers import Peer
from lsp_server.acp.permission import PermissionAsker
from lsp_server.acp.replies import Refused, refusal, refuse
from lsp_server.acp.workspaces import Served, Workspaces
from lsp_server.core import errors
from lsp_server.home.dirs import Dirs

log = logging.getLogger(__name__)

# Sessions whose id comes in the agent's answer, and those whose id the editor names.
NEW_SESSION = ("session/new", "session/fork")
OPENS_SESSION = (*NEW_SESSION, "session/load", "session/resume")
SERVED = (files.READ, files.WRITE, *terminals.METHODS)
_STOP_SECONDS = 5.0


def _key(request_id: Any) -> str:
    return json.dumps(request_id, sort_keys=True)


class Proxy:
    def __init__(self, argv: list[str], dirs: Dirs, root: Path | None, add_mcp: bool) -> None:
        self.argv = argv
        self.add_mcp = add_mcp
        self.editor = Peer("the editor", None)
        self.agent = Peer("the agent", None)
        asker = PermissionAsker(
            self.editor,
            lambda session: self.workspaces.acp_session(session),
            lambda path: self.workspaces.current_text(path),
        )
        self.workspaces = Workspaces(dirs, root, asker)
        self.terminals = terminals.Terminals()
        self.editor_capabilities: dict[str, Any] = {}
        self.agent_gone: str | None = None
        # Who the agent is (initialize's agentInfo, else its program): its sessions' agent.
        self.agent_name = Path(argv[0]).name if argv else None
        self._process: asyncio.subprocess.Process | None = None
        self._opening: dict[str, Served] = {}  # session/new request -> its runtime
        self._waiting: dict[str, Any] = {}  # editor requests the agent has not answered
        self._tasks: set[asyncio.Task[None]] = set()

    # -- life ---------------------------------------------------------------------------

    async def run(self, editor_in: asyncio.StreamReader, editor_out: asyncio.StreamWriter) -> None:
        self.editor = Peer("the editor", editor_out)
        self.workspaces.asker.editor = self.editor
        agent_out = await self._start_agent()
        pumps = [asyncio.create_task(self._pump(LineReader(editor_in), self._from_editor))]
        if agent_out is not None:
            pumps.append(asyncio.create_task(self._pump_agent(LineReader(agent_out))))
        try:
            await pumps[0]  # until the editor closes our stdin
        finally:
            for pump in pumps[1:]:
                pump.cancel()
            await self.close()

    async def _start_agent(self) -> asyncio.StreamReader | None:
        try:
            self._process = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            self.agent_gone = f"the agent {self.argv[0]!r} could not be started ({exc})"
            log.error("%s", self.agent_gone)
            return None
        assert self._process.stdin is not None and self._process.stdout is not None
        self.agent = Peer("the agent", self._process.stdin)
        return self._process.stdout

    async def close(self) -> None:
        self.agent.close()
        await self._stop_agent()
        for task in list(self._tasks):
            task.cancel()
        await self.terminals.release_all()
        await self.workspaces.close()

    async def _stop_agent(self) -> None:
        process = self._process
        if process is None or process.returncode is not None:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), _STOP_SECONDS)
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sig)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), _STOP_SECONDS)
                return

    def kill_now(self) -> None:
        if self._process is not None and self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._process.pid, signal.SIGKILL)
        self.workspaces.kill_now()

    async def _pump(self, reader: LineReader, handle: Any) -> None:
        while (message := await reader.next()) is not None:
            try:
                await handle(message)
            except Exception:  # a bug of ours on one odd message: the connection stays up
                log.exception("toolhost acp could not pass on a message")

    async def _pump_agent(self, reader: LineReader) -> None:
        await self._pump(reader, self._from_agent)
        status = await self._process.wait() if self._process is not None else None
        self.agent_gone = f"the agent exited (status {status})"
        log.warning("%s", self.agent_gone)
        self.agent.close()
        await self.terminals.release_all()  # nobody is left to read or stop its commands
        for key, request_id in list(self._waiting.items()):
            self._waiting.pop(key, None)
            await self.editor.send(self._agent_gone_reply(request_id, "during this request"))

    def _agent_gone_reply(self, request_id: Any, when: str) -> Message:
        error = refusal(
            errors.ACP_AGENT_EXITED,
            f"{self.agent_gone} {when}; toolhost keeps the files, checkpoints and audit log of "
            "what it ran",
            "restart the agent (reopen the agent chat); `toolhost checkpoints` lists what it "
            "changed",
            rpc_code=AGENT_GONE,
        )
        return error_reply(request_id, **error)

    # -- editor -> agent ----------------------------------------------------------------

    async def _from_editor(self, message: Message | Malformed) -> None:
        if isinstance(message, Malformed):
            code = PARSE_ERROR if message.reason.startswith("not JSON") else INVALID_REQUEST
            text = f"toolhost acp: the editor sent {message.reason}: {message.preview!r}"
            await self.editor.send(error_reply(message.request_id, code, text))
            return
        method = message.get("method")
        if method is None:  # a response: to toolhost's own request, or to the agent's
            if not self.editor.answer(message):
                await self.agent.send(message)
            return
        if method == "initialize":
            params, self.editor_capabilities = rewrites.initialize(message.get("params"))
            self.workspaces.editor_fs = rewrites.editor_fs(self.editor_capabilities)
            message = {**message, "params": params}
        elif method in OPENS_SESSION:
            try:
                message = await self._open_session(message)
            except Refused as refused:  # a root that is no workspace: the agent never sees it
                if "id" in message:
                    await self.editor.send(error_reply(message["id"], **refused.error))
                return
        has_id = "id" in message
        if self.agent_gone is not None:
            if has_id:
                await self.editor.send(self._agent_gone_reply(message["id"], "before it"))
            return
        if has_id:
            self._waiting[_key(message["id"])] = message["id"]
        if not await self.agent.send(message) and has_id:
            self._waiting.pop(_key(message["id"]), None)
            await self.editor.send(self._agent_gone_reply(message["id"], "before it"))

    async def _open_session(self, message: Message) -> Message:
        params = message.get("params")
        cwd = params.get("cwd") if isinstance(params, dict) else None
        if not isinstance(params, dict) or not isinstance(cwd, str):
            return message  # the agent says what is wrong with it
        if not PurePosixPath(cwd).is_absolute() or not await anyio.Path(cwd).is_dir():
            return message
        if self.workspaces.isolate and message["method"] in NEW_SESSION:
            isolated = await self.workspaces.isolated(Path(cwd))  # Refused: the editor hears
            params, cwd = {**params, "cwd": str(isolated)}, str(isolated)
        served = await self.workspaces.for_cwd(Path(cwd))
        if message["method"] in NEW_SESSION:
            self._opening[_key(message.get("id"))] = served
        elif isinstance(params.get("sessionId"), str):
            self.workspaces.bind(params["sessionId"], served)
        if self.add_mcp and served.runtime.config.acp.mcp_server:
            params = rewrites.with_mcp_server(params, served.root)
        return {**message, "params": params}

    # -- agent -> editor ----------------------------------------------------------------

    async def _from_agent(self, message: Message | Malformed) -> None:
        if isinstance(message, Malformed):
            log.warning("the agent sent %s: %r", message.reason, message.preview)
            text = f"toolhost acp: the agent sent {message.reason}: {message.preview!r}"
            await self.agent.send(error_reply(message.request_id, INVALID_REQUEST, text))
            return
        method = message.get("method")
        if method is None:
            if not self.agent.answer(message):
                self._learn_agent(message.get("result"))
                key = _key(message.get("id"))
                self._waiting.pop(key, None)
                self._session_opened(key, message)
                await self.editor.send(message)
            return
        if method in SERVED:
            if "id" in message:
                task = asyncio.create_task(self._serve(message))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            return
        await self.editor.send(message)

    def _learn_agent(self, result: Any) -> None:
        """initialize's answer names the agent (agentInfo.name): its sessions' agent."""
        info = result.get("agentInfo") if isinstance(result, dict) else None
        if isinstance(info, dict) and isinstance(info.get("name"), str):
            self.agent_name = info["name"]

    def _session_opened(self, key: str, response: Message) -> None:
        served = self._opening.pop(key, None)
        result = response.get("result")
        if served is not None and isinstance(result, dict):
            session_id = result.get("sessionId")
            if isinstance(session_id, str):
                self.workspaces.bind(session_id, served)
                served.runtime.sessions.get(session_id, self.agent_name)

    async def _serve(self, message: Message) -> None:
        method = str(message["method"])
        try:
            result = await self._answer(method, params_of(message))
            reply = result_reply(message["id"], result)
        except Refused as refused:
            reply = error_reply(message["id"], **refused.error)
        except Exception as exc:  # a bug of ours: said plainly, the connection stays up
            log.exception("serving %s failed", method)
            error = refusal(
                errors.INTERNAL_ERROR,
                f"toolhost hit a bug serving {method} ({type(exc).__name__})",
                "the proxy keeps running; report the log line, or try another way",
                rpc_code=INTERNAL_ERROR,
            )
            reply = error_reply(message["id"], **error)
        await self.agent.send(reply)

    async def _answer(self, method: str, params: dict[str, Any]) -> Any:
        session_id = text_param(params, "sessionId", method)
        served = self.workspaces.of_session(session_id)
        if served is None:
            raise refuse(
                errors.INVALID_ARGUMENT,
                f"no ACP session {session_id!r} was opened through toolhost acp",
                "open the session with session/new through toolhost acp, then use its id",
            )
        if method == files.READ:
            return await files.read_text_file(served, session_id, params)
        if method == files.WRITE:
            return await files.write_text_file(served, session_id, params)
        return await self.terminals.handle(method, served, session_id, params)
