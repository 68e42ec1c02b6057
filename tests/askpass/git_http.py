"""A git smart-HTTP server on 127.0.0.1 that requires basic auth: the real
`git http-backend` behind a small CGI wrapper (http.server), for the password prompt tests
of every face and editor. `secret_places` lists where a typed password must never be."""

from __future__ import annotations

import base64
import os
import subprocess
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import attrs

BACKEND = "/usr/lib/git-core/git-http-backend"
USER = "ada"
PASSWORD = "correct-horse-battery-staple-7731"


@attrs.define
class GitServer:
    url: str
    """http://127.0.0.1:PORT/repo.git"""
    requests: list[str] = attrs.Factory(list)
    """Each request's method and path, with `auth` when it carried the right password."""


def make_repository(folder: Path) -> Path:
    """A bare repository with one commit holding README.md."""
    work = folder / "work"
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True, env=env)
    (work / "README.md").write_text("served over smart HTTP\n")
    subprocess.run(["git", "-C", str(work), "add", "README.md"], check=True, env=env)
    subprocess.run(
        [
            "git",
            "-C",
            str(work),
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-q",
            "-m",
            "first",
        ],
        check=True,
        env=env,
    )
    bare = folder / "repo.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True, env=env)
    return bare


def _handler(root: Path, server: GitServer) -> type[BaseHTTPRequestHandler]:
    expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def _serve(self) -> None:
            authorized = self.headers.get("Authorization") == expected
            server.requests.append(f"{self.command} {self.path}{' auth' if authorized else ''}")
            if not authorized:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="test"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            path, _, query = self.path.partition("?")
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "GIT_PROJECT_ROOT": str(root),
                "GIT_HTTP_EXPORT_ALL": "1",
                "REQUEST_METHOD": self.command,
                "PATH_INFO": path,
                "QUERY_STRING": query,
                "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                "CONTENT_LENGTH": str(len(body)),
                "REMOTE_USER": USER,
                "REMOTE_ADDR": "127.0.0.1",
                "GIT_CONFIG_NOSYSTEM": "1",
                "HOME": str(root),
            }
            if self.headers.get("Git-Protocol"):
                env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
            out = subprocess.run([BACKEND], input=body, env=env, capture_output=True).stdout
            head, _, payload = out.partition(b"\r\n\r\n")
            status = 200
            headers = []
            for line in head.decode("latin-1").split("\r\n"):
                name, _, value = line.partition(":")
                if name.lower() == "status":
                    status = int(value.strip().split()[0])
                elif name:
                    headers.append((name, value.strip()))
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = _serve
        do_POST = _serve

    return Handler


@contextmanager
def git_http_server(folder: Path) -> Iterator[GitServer]:
    """The server, serving `folder`/repo.git (made here) on an ephemeral loopback port."""
    folder.mkdir(parents=True, exist_ok=True)
    make_repository(folder)
    server = GitServer(url="")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(folder, server))
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}/repo.git"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def shadow_objects(state: Path) -> bytes:
    """Every object of every checkpoint repository under the state folder, inflated (a
    loose object is zlib-compressed; packs are read with git cat-file)."""
    found = b""
    for objects in state.rglob("objects"):
        if not objects.is_dir():
            continue
        git_dir = objects.parent
        done = subprocess.run(
            ["git", "--git-dir", str(git_dir), "cat-file", "--batch-all-objects", "--batch"],
            capture_output=True,
        )
        found += done.stdout
        for loose in objects.glob("??/*"):
            with suppress(OSError, zlib.error):
                found += zlib.decompress(loose.read_bytes())
    return found


def files_holding(folder: Path, secret: str) -> list[str]:
    """Files under `folder` whose bytes hold `secret` (plain, or inside a shadow repository's
    objects)."""
    needle = secret.encode()
    hits = []
    for path in [folder] if folder.is_file() else folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            try:
                if needle in path.read_bytes():
                    hits.append(str(path))
            except OSError:
                continue
    if folder.is_dir() and needle in shadow_objects(folder):
        hits.append(f"{folder} (a checkpoint object)")
    return hits
