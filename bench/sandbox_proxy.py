"""What the allow-list network proxy adds to a sandboxed command (issue 27): `true` and a
`curl` of a loopback test server through toolhost's runner under bubblewrap, without the
proxy (the read-only plan of plain reads) and with it (the forwarder started in the
sandbox, the proxy listening on its Unix socket), interleaved in the same run; medians.

    .venv/bin/python bench/sandbox_proxy.py --rounds 15
"""

from __future__ import annotations

import argparse
import asyncio
import http.server
import statistics
import tempfile
import threading
import time
from pathlib import Path

import attrs

from lsp_server.sandbox.netallow import NetworkAllowList, parse_allow_list
from lsp_server.sandbox.netproxy import NetworkProxy
from lsp_server.sandbox.service import SandboxService
from lsp_server.shell.runner import RunLimits, run_command

LIMITS = RunLimits(timeout_seconds=60)


def loopback_server() -> int:
    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "3")
            self.end_headers()
            self.wfile.write(b"ok\n")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return int(server.server_address[1])


async def main(rounds: int) -> None:
    service = SandboxService()
    root = Path(tempfile.mkdtemp(prefix="toolhost-bench-proxy-"))
    plan = service.plan("workspace-write", proxy=True)
    port = loopback_server()
    allow = NetworkAllowList(parse_allow_list([f"127.0.0.1:{port}"]))
    rows = (
        ("`true`", "true"),
        ("`curl` of a listed loopback server", f"curl -sSf 127.0.0.1:{port}/"),
    )
    print("| command | sandboxed, no proxy | sandboxed + proxy | added | ratio |")
    print("| --- | --- | --- | --- | --- |")
    for name, command in rows:
        times: dict[bool, list[float]] = {False: [], True: []}
        for index in range(rounds + 1):
            for with_proxy in (False, True):
                proxy = await NetworkProxy(allow).start() if with_proxy else None
                layout = service.launcher(plan, [root], [], proxy.socket_path if proxy else None)
                if not with_proxy:
                    layout = attrs.evolve(layout, proxy_socket=None)
                started = time.perf_counter()
                result = await run_command(command, root, LIMITS, launcher=layout)
                elapsed = time.perf_counter() - started
                if proxy is not None:
                    await proxy.close()
                if index and (result.exit_code == 0 or not with_proxy):
                    times[with_proxy].append(elapsed)
        plain, proxied = statistics.median(times[False]), statistics.median(times[True])
        print(
            f"| {name} | {plain * 1000:.1f} ms | {proxied * 1000:.1f} ms | "
            f"+{(proxied - plain) * 1000:.1f} ms | {proxied / plain:.2f} |"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    asyncio.run(main(parser.parse_args().rounds))
