"""Run inside a fresh network namespace (`unshare -n`): bring loopback up, serve the scripted
model on 127.0.0.1:MODEL_PORT, run the agent command, exit with its status.

    unshare -n -- python in_netns.py --script S.json --log requests.jsonl -- AGENT ARGS...

Only loopback exists in the namespace, so the agent, toolhost and the model reach nothing
else; the fixed port cannot collide with anything, each namespace has its own.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.agents import model_servers

MODEL_PORT = 8765


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--script", type=Path, required=True)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    script = json.loads(args.script.read_text(encoding="utf-8"))
    server = model_servers.start("127.0.0.1", MODEL_PORT, script, args.log)
    child = subprocess.Popen(command)
    # The test stops a run by signalling this process's group; the agent is in it too.
    signal.signal(signal.SIGTERM, lambda *_: child.terminate())
    status = child.wait()
    server.stop()
    return status


if __name__ == "__main__":
    sys.exit(main())
