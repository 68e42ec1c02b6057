"""Inside the sandbox: the command's way to the network proxy (standard library only).

Run as `python -I -S forwarder.py SOCKET -- argv...` as the sandbox's first process. The
sandbox has a network namespace of its own with only its loopback, so a command cannot
reach the proxy's Unix socket by itself through HTTP_PROXY: this listens on its loopback,
points HTTP_PROXY/HTTPS_PROXY (both cases) at it, runs argv as its child and relays each
connection to the proxy's socket. A request for the sandbox's own loopback (a server the
command started itself) goes there when something listens on it; everything else goes to
the proxy, which decides. It exits as its child does, with the same status.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import threading

_HEAD_LIMIT = 65536
_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1", "ip6-localhost")


def parse_head(head: bytes) -> tuple[str, str, int, str] | None:
    """(method, host, port, origin-form target) of a proxy request head, None if it is
    not one. CONNECT host:port has target ""; `GET http://host:port/path` has "/path"."""
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split(" ")
    if len(parts) != 3:
        return None
    method, target, _ = parts
    if method == "CONNECT":
        authority, path, default = target, "", 443
    elif target.lower().startswith("http://"):
        rest = target[7:]
        cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
        authority, path, default = rest[:cut], rest[cut:] or "/", 80
        if path.startswith("?"):
            path = "/" + path
    else:
        return None
    authority = authority.rsplit("@", 1)[-1]
    if authority.startswith("["):
        end = authority.find("]")
        host, port_text = authority[1:end], authority[end + 2 :]
    elif authority.count(":") == 1:
        host, port_text = authority.split(":")
    else:
        host, port_text = authority, ""
    if port_text and not port_text.isdigit():
        return None
    port = int(port_text) if port_text else default
    return method, host.lower(), port, path


def origin_form(head: bytes, path: str) -> bytes:
    """The head with its request line's target made origin-form, for a direct server."""
    first, rest = head.split(b"\r\n", 1)
    method, _, version = first.split(b" ")
    return method + b" " + path.encode("latin-1") + b" " + version + b"\r\n" + rest


def read_head(conn: socket.socket) -> tuple[bytes, bytes]:
    """(head up to and including the blank line, bytes after it); head b"" if none."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk or len(data) > _HEAD_LIMIT:
            return b"", data
        data += chunk
    end = data.index(b"\r\n\r\n") + 4
    return data[:end], data[end:]


def pipe(a: socket.socket, b: socket.socket) -> None:
    """Copy both ways until both sides are done."""

    def one_way(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := src.recv(65536):
                dst.sendall(chunk)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    other = threading.Thread(target=one_way, args=(b, a), daemon=True)
    other.start()
    one_way(a, b)
    other.join()


def _local(host: str, port: int) -> socket.socket | None:
    if host not in _LOOPBACK_NAMES and not host.startswith("127."):
        return None
    try:
        return socket.create_connection((host, port), timeout=2)
    except OSError:
        return None


def serve(conn: socket.socket, proxy_socket: str) -> None:
    with conn:
        head, rest = read_head(conn)
        request = parse_head(head) if head else None
        if request is not None:
            method, host, port, path = request
            local = _local(host, port)
            if local is not None:
                local.settimeout(None)
                with local:
                    if method == "CONNECT":
                        conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    else:
                        local.sendall(origin_form(head, path))
                    if rest:
                        local.sendall(rest)
                    pipe(conn, local)
                return
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with upstream:
            try:
                upstream.connect(proxy_socket)
            except OSError:
                conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                return
            upstream.sendall(head + rest)
            pipe(conn, upstream)


def _accept(listener: socket.socket, proxy_socket: str) -> None:
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn, proxy_socket), daemon=True).start()


def _exit_like(status: int) -> None:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.waitstatus_to_exitcode(status))


def main(args: list[str]) -> None:
    proxy_socket, argv = args[0], args[2:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    env = dict(os.environ)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        env[name] = url
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        env.pop(name, None)
    child = os.fork()
    if child == 0:
        listener.close()
        # Python ignores SIGPIPE; the command must get the default (`yes | head` ends).
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_DFL)
        try:
            os.execvpe(argv[0], argv, env)
        finally:
            os._exit(127)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: os.kill(child, signum))
    threading.Thread(target=_accept, args=(listener, proxy_socket), daemon=True).start()
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    _exit_like(status)


if __name__ == "__main__":
    main(sys.argv[1:])
