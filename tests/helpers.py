"""Shared test helpers: an in-process runtime, and a real `toolhost serve` over pytest-lsp."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import attrs
import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from lsp_server.cli.lsp_json_client import plain_json_converter
from lsp_server.compose import build_runtime
from lsp_server.config.tree import Config, structure_config
from lsp_server.core.contract import Registry
from lsp_server.home.dirs import Dirs
from lsp_server.protocol import CallParams, CallResult, message_converter
from lsp_server.runtime.approvals.verdicts import ModeApprover
from lsp_server.runtime.dispatch import Runtime

SERVER_COMMAND = [sys.executable, "-m", "lsp_server", "serve"]


def make_runtime(
    root: Path,
    settings: dict[str, Any] | None = None,
    mode: str = "bypass",
    *,
    long_lived: bool = False,
    registry: Registry | None = None,
) -> Runtime:
    """An in-process runtime over `root` whose approver allows writers (mode bypass), with
    the services the server installs (jobs, symbol index, language servers), built by the
    same composition root as the server. `long_lived=True`: the index as the server has it
    (background builds, refreshed on every write)."""
    problems: list[str] = []
    config = structure_config(settings or {}, problems, Config())
    assert not problems, problems
    dirs = Dirs(state=root.parent / f".{root.name}-state", config=Dirs.from_environment().config)
    runtime, _ = build_runtime(
        [root],
        config,
        dirs=dirs,
        approver=ModeApprover(mode, "deny"),
        long_lived=long_lived,
        registry=registry,
    )
    return runtime


async def call_tool(
    runtime: Runtime, name: str, arguments: Any, session: str = "default", **extra: Any
) -> CallResult:
    return await runtime.call(CallParams(name=name, arguments=arguments, session=session, **extra))


def text_of(result: CallResult | dict[str, Any]) -> str:
    content = result["content"] if isinstance(result, dict) else result.content
    return "\n".join(part["text"] for part in content if part.get("type") == "text")


@functools.cache
def _converter() -> Any:
    # Building the converter registers every message hook: about 70 ms, once is enough.
    return message_converter()


def as_json(result: CallResult) -> dict[str, Any]:
    data: dict[str, Any] = _converter().unstructure(result)
    return data


def make_test_client() -> LanguageClient:
    client = LanguageClient(converter_factory=plain_json_converter)

    @client.feature("toolhost/didCall")
    def _did_call(params: Any) -> None:
        client.did_calls.append(params)  # type: ignore[attr-defined]

    client.did_calls = []  # type: ignore[attr-defined]
    return client


@asynccontextmanager
async def lsp_session(
    root: Path,
    options: dict[str, Any] | None = None,
    experimental: dict[str, Any] | None = None,
    state_dir: Path | None = None,
    client_factory: Any = make_test_client,
    capabilities: types.ClientCapabilities | None = None,
    client_info: types.ClientInfo | None = None,
    server_args: tuple[str, ...] = (),
) -> AsyncIterator[LanguageClient]:
    """A real `toolhost serve` subprocess, initialized with `root` as its workspace folder."""
    env = dict(os.environ)
    env["TOOLHOST_STATE_DIR"] = str(state_dir or root.parent / f".{root.name}-state")
    config = ClientServerConfig(
        server_command=[*SERVER_COMMAND, *server_args],
        client_factory=client_factory,
        server_env=env,
    )
    client: LanguageClient = await config.start()  # type: ignore[assignment]
    caps = capabilities or types.ClientCapabilities()
    if experimental is not None:
        caps = attrs.evolve(caps, experimental={"toolhost": experimental})
    client.init_result = await client.initialize_session(  # type: ignore[attr-defined]
        types.InitializeParams(
            capabilities=caps,
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options={"toolhost": options or {}},
            client_info=client_info,
        )
    )
    try:
        yield client
    finally:
        await client.shutdown_session()
        await client.stop()  # type: ignore[no-untyped-call]


async def lsp_call(
    client: LanguageClient, name: str, arguments: Any, session: str = "default", **extra: Any
) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments, "session": session, **extra}
    result: dict[str, Any] = await client.protocol.send_request_async("toolhost/call", params)
    return result


@contextmanager
def loopback_http(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 (tests reach loopback only) serving `handler` in a thread;
    yields its base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def fixed_page(body: bytes, content_type: str) -> type[http.server.BaseHTTPRequestHandler]:
    """A handler that answers every GET with `body`, quietly."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Page


def in_own_mounts(setup: str, script: str) -> subprocess.CompletedProcess[str]:
    """Python `script` run after the shell commands `setup` in a mount namespace of its own
    (needs root and unshare(1), else the test is skipped): what `setup` mounts is the
    test's alone."""
    unshare = shutil.which("unshare")
    if unshare is None or os.geteuid() != 0:
        pytest.skip("needs root and unshare(1) to mount a file system for the test")
    shell = f'{setup} && exec {sys.executable} -c "$0"'
    return subprocess.run(
        [unshare, "-m", "--propagation", "private", "sh", "-c", shell, script],
        capture_output=True,
        text=True,
        timeout=120,
    )
