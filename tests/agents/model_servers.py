"""A scripted model on loopback for the real agent CLIs: Anthropic Messages (`POST /v1/messages`,
SSE or JSON), OpenAI Responses (`POST /v1/responses`, SSE) and the Gemini API
(`POST /v1beta/models/M:streamGenerateContent?alt=sse`, `:generateContent`), all on one port.

This is the one mock of the agent tests, named as such: no model is reachable here, so a script
plays the model. Everything else (the agent, toolhost, the MCP wire between them) is real.

    server = start("127.0.0.1", 0, [tool("mcp__toolhost__read_file", path="a.py"), say("done")])
    server.url        # http://127.0.0.1:PORT
    server.requests   # every request body the agent sent, in order (a list of Logged)
    server.stop()

Name tools as the model sees them: `mcp__toolhost__read_file` for Claude Code and Codex (Codex
offers an MCP server's tools as a namespace `mcp__toolhost`; a call names the namespace and
the tool, which this server does for a name of that shape), `mcp_toolhost_read_file` for
Gemini CLI.

The script is a list of steps; the step played is the number of model turns already in the
conversation the agent sent (assistant messages / function calls), so retries and the agent's
side requests (titles, summaries: requests that carry no tools) never shift it. Side requests
get a short text. Past the end of the script the model says "done".

Run as a program (`python -m tests.agents.model_servers --script FILE --log FILE`) it serves
the script of a JSON file and appends every request to a JSON-lines log: that is how the tests
run it inside an agent's own network namespace.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.agents.model_wire import (
    Logged,
    Script,
    Step,
    anthropic_events,
    anthropic_message,
    copy_call,
    gemini_response,
    pick_step,
    responses_events,
    say,
    tool,
    tool_names,
    tool_results,
    tool_schemas,
)

__all__ = ["Logged", "ModelServer", "Script", "Step", "read_log", "say", "start", "tool"]
__all__ += ["copy_call", "tool_names", "tool_results", "tool_schemas"]


class ModelServer:
    """A running scripted model; `requests` grows as the agent talks to it."""

    def __init__(self, host: str, port: int, script: Script, log: Path | None = None) -> None:
        self.script = script
        self.requests: list[Logged] = []
        self.log = log
        self.ids = itertools.count(1)
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer((host, port), handler_for(self))
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def record(self, entry: Logged) -> None:
        with self.lock:
            self.requests.append(entry)
            if self.log is not None:
                with self.log.open("a", encoding="utf-8") as out:
                    out.write(json.dumps(entry.as_json()) + "\n")

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def start(host: str, port: int, script: Script, log: Path | None = None) -> ModelServer:
    """Serve `script` on host:port (0 picks a free port); `.url`, `.requests`, `.stop()`."""
    return ModelServer(host, port, script, log)


def read_log(path: Path) -> list[Logged]:
    """The requests a model server running as a program appended to its log."""
    if not path.exists():
        return []
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [Logged(e["api"], e["path"], e["body"], e["at"]) for e in entries]


def api_of(path: str) -> str | None:
    if path.startswith("/v1/messages"):
        return "anthropic"
    if "/responses" in path:
        return "openai"
    if "/models/" in path and ":" in path.rsplit("/", 1)[-1]:
        return "gemini"
    return None


def handler_for(server: ModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            # Model lists (Codex asks for /v1/models): an empty list.
            self.send_json(200, {"object": "list", "data": [], "models": []})

        def do_HEAD(self) -> None:
            self.send_json(200, {})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.headers.get("Content-Encoding") == "zstd" or (raw[:1] not in (b"{", b"[")):
                self.send_json(415, {"error": {"message": "send plain JSON"}})
                return
            body = json.loads(raw or b"{}")
            path = self.path.split("?", 1)[0]
            api = api_of(path)
            entry = Logged(api or "other", self.path, body)
            server.record(entry)
            if api is None:
                self.send_json(404, {"error": {"message": f"no such endpoint {path}"}})
                return
            if path.endswith("/count_tokens") or path.endswith(":countTokens"):
                self.send_json(200, {"input_tokens": 10, "totalTokens": 10})
                return
            step = pick_step(server.script, entry)
            model = str(body.get("model") or path.rsplit("/", 1)[-1].split(":")[0])
            if api == "anthropic":
                if body.get("stream"):
                    self.send_sse(anthropic_events(step, model, server.ids), named=True)
                else:
                    self.send_json(200, anthropic_message(step, model, server.ids))
            elif api == "openai":
                self.send_sse(responses_events(step, model, server.ids), named=True)
            elif "stream" in path.rsplit("/", 1)[-1]:
                self.send_sse(iter([("", gemini_response(step))]), named=False)
            else:
                self.send_json(200, gemini_response(step))

        def send_json(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def send_sse(self, events: Iterator[tuple[str, Any]], *, named: bool) -> None:
            chunks = []
            for name, data in events:
                head = f"event: {name}\n" if named else ""
                chunks.append(f"{head}data: {json.dumps(data)}\n\n")
            data = "".join(chunks).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--script", type=Path, required=True, help="JSON list of steps")
    parser.add_argument("--log", type=Path, required=True, help="JSON-lines request log")
    parser.add_argument("--ready", type=Path, help="written with the URL once listening")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    script = json.loads(args.script.read_text(encoding="utf-8"))
    server = start(args.host, args.port, script, args.log)
    if args.ready:
        args.ready.write_text(server.url, encoding="utf-8")
    print(server.url, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.thread.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
