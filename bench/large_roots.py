"""The first commands on roots too large to snapshot on the command's path (issue 43): a
non-git folder (200,000 files: bench/monorepo.py's plain folder), a home folder the user
allowed as a root (HOME set to it, the state and config folders inside it, as a new user
meets it), and `/`. One `toolhost mcp` each over stdio (raw client, bench/rawrpc.py),
policy mode bypass, three writing `bash` calls; then the user's `toolhost revert` of the
first. Printed per root: each call's seconds and the checkpoint line of its result, the
revert's answer, the state folder's growth and the tracebacks in the server's stderr.

    .venv/bin/python bench/large_roots.py [--plain DIR] [--home DIR] [--slash]

--plain: a folder outside git (its own state and config folders in a temporary folder);
--home: a folder used as HOME and as the root (`allow_broad_roots = true` is written to
its .config/toolhost/config.toml; the file it appends to is .bashrc, restored after);
--slash: `/` as the root, HOME as for --home (needs --home). The figures go with the
1-minute load printed beside them: the machine is shared.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.rawrpc import RawClient

INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "bench-large-roots", "version": "1"},
}
HERE = Path(__file__).resolve().parents[1]


def toolhost() -> list[str]:
    script = Path(sys.executable).with_name("toolhost")
    return [str(script)] if script.exists() else [sys.executable, "-m", "lsp_server.cli"]


def megabytes(folder: Path) -> float:
    total = 0
    for base, _dirs, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(base, name)).st_size
    return total / (1 << 20)


def checkpoint_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("[no checkpoint")]


def run_root(label: str, root: Path, env: dict[str, str], state: Path, target: Path) -> None:
    before = megabytes(state) if state.exists() else 0.0
    with tempfile.TemporaryFile() as stderr:
        command = [*toolhost(), "mcp", "--root", str(root), "--attach", "never"]
        client = RawClient(command, framing="line", cwd=target.parent, env=env, stderr=stderr)
        client.request("initialize", INITIALIZE)
        client.notify("notifications/initialized", {})
        client.request("tools/list", {})
        first_id = ""
        for n in range(3):
            started = time.perf_counter()
            arguments = {"command": f"echo 'bench {n}' >> {target}"}
            result: dict[str, Any] = client.request(
                "tools/call", {"name": "bash", "arguments": arguments}
            )
            seconds = time.perf_counter() - started
            text = "\n".join(part.get("text", "") for part in result.get("content", []))
            first_id = first_id or result["_meta"]["toolhost"]["callId"]
            lines = checkpoint_lines(text) or ["(no checkpoint line)"]
            load = os.getloadavg()[0]
            print(f"{label}: call {n + 1}: {seconds:.2f} s (load {load:.1f}): {lines[0]}")
        client.close()
        stderr.seek(0)
        tracebacks = stderr.read().decode(errors="replace").count("Traceback")
    revert = subprocess.run(
        [*toolhost(), "revert", first_id, "--root", str(root)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    answer = (revert.stdout + revert.stderr).strip().splitlines()
    print(f"{label}: revert of call 1: exit {revert.returncode}: {answer[0] if answer else ''}")
    grown = (megabytes(state) if state.exists() else 0.0) - before
    print(f"{label}: state folder grew {grown:.1f} MB; tracebacks in stderr: {tracebacks}")


def environment(home: Path | None, folder: Path) -> tuple[dict[str, str], Path]:
    """The server's environment and its state folder: HOME=home (XDG unset) or folders of
    its own under `folder`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.pop("TOOLHOST_STATE_DIR", None)
    if home is not None:
        config = home / ".config" / "toolhost"
        config.mkdir(parents=True, exist_ok=True)
        policy = '[policy]\nmode = "bypass"\n\n[workspace]\nallow_broad_roots = true\n'
        (config / "config.toml").write_text(policy)
        env["HOME"] = str(home)
        return env, home / ".local" / "state" / "toolhost"
    config = folder / "config" / "toolhost"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('[policy]\nmode = "bypass"\n')
    env["XDG_STATE_HOME"] = str(folder / "state")
    env["XDG_CONFIG_HOME"] = str(folder / "config")
    return env, folder / "state" / "toolhost"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--plain", type=Path)
    parser.add_argument("--home", type=Path)
    parser.add_argument("--slash", action="store_true")
    args = parser.parse_args()
    if args.slash and args.home is None:
        parser.error("--slash needs --home (the HOME of the server)")
    if args.plain is not None:
        folder = Path(tempfile.mkdtemp(prefix="toolhost-large-roots-"))
        try:
            env, state = environment(None, folder)
            target = args.plain / "bench_large_roots.txt"
            run_root("non-git folder", args.plain.resolve(), env, state, target)
            target.unlink(missing_ok=True)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    if args.home is not None:
        home = args.home.resolve()
        bashrc = home / ".bashrc"
        kept = bashrc.read_bytes() if bashrc.exists() else None
        env, state = environment(home, home)
        try:
            run_root("home folder", home, env, state, bashrc)
            if args.slash:
                run_root("/", Path("/"), env, state, bashrc)
        finally:
            if kept is None:
                bashrc.unlink(missing_ok=True)
            else:
                bashrc.write_bytes(kept)


if __name__ == "__main__":
    main()
