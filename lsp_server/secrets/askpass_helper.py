"""Inside a command (and its sandbox): the program that answers a password prompt by asking
the user through toolhost (standard library only; askpass.py writes the small scripts that
run it as `python -I -S askpass_helper.py KIND ...`).

KIND `ssh`, `sudo` or `git` is an askpass program: SSH_ASKPASS, SUDO_ASKPASS and
GIT_ASKPASS run it with the prompt as its argument and read the answer from its standard
output. KIND `credential` is a git credential helper: `get` reads the request's
`key=value` lines on standard input and prints `username=` and `password=`, or `quit=1`
(git then asks no one else and fails).

It connects to the toolhost that started the command (TOOLHOST_ASKPASS_SOCKET) with the
command's own token (TOOLHOST_ASKPASS_TOKEN): one JSON line each way. The answer goes to
its standard output and nowhere else; a refusal is said on standard error, where the
program's own failure message follows it.
"""

from __future__ import annotations

import json
import os
import socket
import sys

SOCKET_VARIABLE = "TOOLHOST_ASKPASS_SOCKET"
TOKEN_VARIABLE = "TOOLHOST_ASKPASS_TOKEN"
_LIMIT = 1 << 20


def ask(kind: str, prompt: str, username: str | None = None) -> dict[str, object]:
    """toolhost's answer: {"secret": ..., "username"?: ...} or {"refused": why, "say": text}."""
    path = os.environ.get(SOCKET_VARIABLE, "")
    token = os.environ.get(TOKEN_VARIABLE, "")
    if not path or not token:
        return {"refused": "unavailable", "say": "no toolhost to ask for the password"}
    request = {"token": token, "kind": kind, "prompt": prompt, "username": username}
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(path)
            conn.sendall(json.dumps(request).encode("utf-8") + b"\n")
            data = b""
            while not data.endswith(b"\n") and len(data) < _LIMIT:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
        answer = json.loads(data.decode("utf-8"))
    except (OSError, ValueError) as exc:
        return {"refused": "unavailable", "say": f"toolhost could not be asked ({exc})"}
    return answer if isinstance(answer, dict) else {"refused": "unavailable", "say": "no answer"}


def _refuse(answer: dict[str, object]) -> None:
    say = answer.get("say")
    sys.stderr.write(f"toolhost: {say if isinstance(say, str) else 'no password given'}\n")
    sys.stderr.flush()


def askpass(kind: str, prompt: str) -> int:
    answer = ask(kind, prompt)
    secret = answer.get("secret")
    if not isinstance(secret, str):
        _refuse(answer)
        return 1
    sys.stdout.write(secret + "\n")
    return 0


def credential(operation: str) -> int:
    """git's credential helper protocol: only `get` asks; `store` and `erase` do nothing."""
    fields: dict[str, str] = {}
    for line in sys.stdin.read().splitlines():
        key, sep, value = line.partition("=")
        if sep:
            fields[key] = value
    if operation != "get":
        return 0
    where = f"{fields.get('protocol', '?')}://{fields.get('host', '?')}"
    if fields.get("path"):
        where += "/" + fields["path"]
    username = fields.get("username") or None
    who = f" as {username}" if username else ""
    answer = ask("credential", f"Password for {where}{who}", username)
    secret = answer.get("secret")
    given = answer.get("username")
    if not isinstance(secret, str) or "\n" in secret:
        _refuse(answer)
        sys.stdout.write("quit=1\n")
        return 0
    name = given if isinstance(given, str) and given and "\n" not in given else username
    if name:
        sys.stdout.write(f"username={name}\n")
    sys.stdout.write(f"password={secret}\n")
    return 0


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[1] == "credential":
        return credential(argv[2] if len(argv) > 2 else "")
    kind = argv[1] if len(argv) >= 2 else "askpass"
    return askpass(kind, argv[2] if len(argv) > 2 else "Password:")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
