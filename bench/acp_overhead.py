"""fs/read_text_file round trip of an ACP agent, through `toolhost acp` and without it, in
the same run: the official ACP SDK as the editor, the SCRIPTED TEST AGENT of tests/acp
(SDK-built) timing each of its own requests.

- direct: the agent talks to the SDK editor, which serves fs/read_text_file from the disk
  (what an editor plugin does by hand);
- toolhost: the editor starts `toolhost acp -- <agent>`; toolhost serves the read (confined,
  secrets refused, observed, audited);
- toolhost + editor fs: the editor declares fs/*, so toolhost first asks it for its text of
  the file (unsaved buffers), then reads.

    .venv/bin/python bench/acp_overhead.py [--reads 300] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.acp.harness import REPO, node_folder, run_editor, scripted_agent, toolhost_acp

FS = {"fs": {"readTextFile": True, "writeTextFile": True}}


def one_arm(node: Path, ws: Path, arm: str, reads: int) -> list[float]:
    target = str(ws / "notes.md")
    agent = list(scripted_agent(node))
    command = agent if arm == "direct" else toolhost_acp(*agent, options=("--no-mcp",))
    capabilities = FS if arm in ("direct", "toolhost + editor fs") else {}
    run = run_editor(
        node,
        command,
        ws,
        [[{"op": "time_reads", "path": target, "count": reads}]],
        client_capabilities=capabilities,
        env={"PYTHONPATH": str(REPO)},
        timeout=600,
    )
    (result,) = run.results()
    assert "ok" in result, result
    times: list[float] = result["ok"]["times"]
    return times[5:]  # the first reads warm up caches and imports


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reads", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="acp-bench-"))
    os.environ.setdefault("TOOLHOST_STATE_DIR", str(base / "state"))
    os.environ.setdefault("XDG_CONFIG_HOME", str(base / "config"))
    run_dir = base / "run"
    run_dir.mkdir(mode=0o700)
    os.environ["XDG_RUNTIME_DIR"] = str(run_dir)
    ws = base / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "notes.md").write_text("x" * 4000 + "\n", encoding="utf-8")
    node = node_folder(base)
    arms = ("direct", "toolhost", "toolhost + editor fs")
    samples: dict[str, list[float]] = {arm: [] for arm in arms}
    for _ in range(args.rounds):  # arms interleaved: load changes hit them alike
        for arm in arms:
            samples[arm] += one_arm(node, ws, arm, args.reads)
    p50 = {arm: statistics.median(values) for arm, values in samples.items()}
    rows = []
    for arm, values in samples.items():
        ordered = sorted(values)
        p99 = ordered[int(len(ordered) * 0.99) - 1]
        ratio = p50[arm] / p50["direct"]
        rows.append(
            {
                "arm": arm,
                "p50_ms": round(p50[arm], 3),
                "p99_ms": round(p99, 3),
                "p50_vs_direct": round(ratio, 2),
                "reads": len(values),
            }
        )
    print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
