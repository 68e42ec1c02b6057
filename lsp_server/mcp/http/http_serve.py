"""`toolhost mcp --http 127.0.0.1:PORT`: the same MCP server over Streamable HTTP, with the
official SDK's transport (sessions, SSE streams, both revisions) behind toolhost's gate
(mcp/http/http_gate.py: loopback only, Host and Origin, a bearer token from a fresh 0600 file).

Every MCP session over HTTP is a toolhost session of its own (mcp/server.py `_connection`);
the runtime (local, or the attached editor's) is one for the whole server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings

from lsp_server.home.dirs import Dirs
from lsp_server.home.token_files import write_token_file
from lsp_server.mcp.http.http_answers import UnreadableAnswers
from lsp_server.mcp.http.http_gate import (
    HttpGate,
    NotLoopback,
    allowed_hosts,
    authority,
    parse_address,
)
from lsp_server.mcp.server import Backend, build_server

if TYPE_CHECKING:
    from lsp_server.core.contract import Surface
    from lsp_server.mcp.calls.local import Approvals
    from lsp_server.mcp.calls.router import AttachMode

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"
MAX_REQUEST_BYTES = 64 * 1024 * 1024  # as the LSP face's message cap


class _Uvicorn(uvicorn.Server):
    """uvicorn, stopping on SIGTERM/SIGINT without re-raising the signal afterwards (its
    default), so that the runtime still shuts down (jobs killed) and the token file goes."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, self.handle_exit, signum, None)
        try:
            yield
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything else happens (port 0: any free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Inherited by every accepted connection: without it a response's last small write
        # waits for the client's delayed ACK (about 40 ms per call, bench/mcp_http_latency.py).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
        sock.listen(64)
    except BaseException:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def token_path(dirs: Dirs, port: int) -> Path:
    return dirs.state / f"mcp-http-{port}.token"


async def serve_http(
    root: Path,
    surface: Surface,
    session: str,
    attach: AttachMode,
    host: str,
    port: int,
    approvals: Approvals | None = None,
) -> None:
    sock = bind(host, port)
    port = sock.getsockname()[1]
    path = token_path(Dirs.from_environment(), port)
    token = write_token_file(path)
    backend = Backend(root, surface, session, attach, approvals)
    hosts = allowed_hosts(host, port)
    app = build_server(backend).streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=host,
        # toolhost's own limits decide (a 16 MiB file, escaped in JSON), not the SDK's 4 MiB.
        max_request_body_size=MAX_REQUEST_BYTES,
        # The gate checks first; the SDK's own check agrees with it (this port only).
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=hosts,
            allowed_origins=[f"http://{name}" for name in hosts],
        ),
    )
    config = uvicorn.Config(
        HttpGate(UnreadableAnswers(app), token, host, port),
        lifespan="on",
        log_level="warning",
        access_log=False,
        server_header=False,
        # A client's open SSE stream must not keep a stopping server alive.
        timeout_graceful_shutdown=5,
    )
    server = _Uvicorn(config)
    print(
        f"toolhost mcp: serving MCP over Streamable HTTP at http://{authority(host, port)}"
        f"{MCP_PATH}; bearer token in {path}",
        file=sys.stderr,
        flush=True,
    )
    try:
        await server.serve(sockets=[sock])
    finally:
        sock.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(backend.close(), 10)
        path.unlink(missing_ok=True)


def main(
    root: Path,
    surface: Surface,
    session: str,
    attach: AttachMode,
    address: str,
    approvals: Approvals | None = None,
) -> int:
    try:
        host, port = parse_address(address)
    except NotLoopback as exc:
        print(f"toolhost mcp: --http {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve_http(root, surface, session, attach, host, port, approvals))
    except OSError as exc:  # the port is taken, or the address is not this machine's
        print(f"toolhost mcp: --http {address}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0
