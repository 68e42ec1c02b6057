"""A command printing a lot of output: toolhost's runner against subprocess.run.

Each side runs in a fresh interpreter that reports its wall time and its peak resident
memory (VmHWM: ru_maxrss would carry the parent's high-water mark across exec), so the
figures do not mix. The reference keeps everything (capture_output=True);
toolhost keeps the head and tail (shell.capture_bytes) and counts the rest.

    .venv/bin/python bench/shell_output.py --megabytes 200
"""

from __future__ import annotations

import argparse
import subprocess
import sys

TOOLHOST = """
import asyncio, re, time
from pathlib import Path
from lsp_server.shell.runner import RunLimits, run_command
started = time.perf_counter()
result = asyncio.run(run_command({command!r}, Path('.'), RunLimits(timeout_seconds=600)))
elapsed = time.perf_counter() - started
assert result.total_bytes == {size}, result.total_bytes
status = Path('/proc/self/status').read_text()
print(elapsed, int(re.search(r'VmHWM:\\s+(\\d+) kB', status).group(1)) / 1024)
"""

REFERENCE = """
import re, subprocess, time
from pathlib import Path
started = time.perf_counter()
done = subprocess.run(['bash', '-c', {command!r}], capture_output=True)
elapsed = time.perf_counter() - started
assert len(done.stdout) == {size}
status = Path('/proc/self/status').read_text()
print(elapsed, int(re.search(r'VmHWM:\\s+(\\d+) kB', status).group(1)) / 1024)
"""


def measure(template: str, command: str, size: int) -> tuple[float, float]:
    code = template.format(command=command, size=size)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    seconds, megabytes = out.stdout.split()
    return float(seconds), float(megabytes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--megabytes", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    size = args.megabytes * 1_000_000
    command = f"yes | head -c {size}"
    ours = [measure(TOOLHOST, command, size) for _ in range(args.rounds)]
    reference = [measure(REFERENCE, command, size) for _ in range(args.rounds)]
    our_time = min(t for t, _ in ours)
    ref_time = min(t for t, _ in reference)
    our_mem = max(m for _, m in ours)
    ref_mem = max(m for _, m in reference)
    print(f"command: {command} (best of {args.rounds})")
    print(f"toolhost runner:  {our_time:6.2f} s  peak RSS {our_mem:7.1f} MB")
    print(f"subprocess.run:   {ref_time:6.2f} s  peak RSS {ref_mem:7.1f} MB")
    print(f"time ratio (toolhost / reference): {our_time / ref_time:.2f}")
    print(f"memory ratio (toolhost / reference): {our_mem / ref_mem:.2f}")


if __name__ == "__main__":
    main()
