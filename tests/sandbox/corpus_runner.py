"""Runs the tricky command corpus (tests/policy/tricky_commands.py) through a real runtime
and reports what each command did to a scratch repository (issue 27's acceptance).

`python -m tests.sandbox.corpus_runner SETTINGS_JSON BASE` prints one JSON line per
command: {command, code, text, changed, pwned, prompts}. The runtime is built by
compose.py with the real policy engine and an asker that denies every approval (and
counts the prompts). Each command gets the same pristine repository under BASE (rebuilt
when a command changed it); what it did is the difference of every file, .git included.
The sandbox-off run executes this inside an outer bubblewrap of its own, so a command the
classifier wrongly lets through cannot touch the machine.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from lsp_server.compose import build_runtime
from lsp_server.config.tree import Config, structure_config
from lsp_server.home.dirs import Dirs
from lsp_server.protocol import ApproveParams, CallParams
from tests.policy.tricky_commands import commands

# git rewrites its own stat cache on reads (`git status`); nothing else may change.
UNCOMPARED = {".git/index"}
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
}  # fmt: skip


def make_repository(root: Path) -> None:
    """The corpus's scratch repository: a.txt committed, x untracked."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True, env=env)
    (root / "a.txt").write_text("a\n")
    subprocess.run(["git", "-C", str(root), "add", "a.txt"], check=True, env=env)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "one"], check=True, env=env)
    (root / "x").write_text("x\n")
    for path in root.rglob("*"):  # in the past: no racily clean index entries
        os.utime(path, (1_000_000_000, 1_000_000_000), follow_symlinks=False)


def state_of(root: Path) -> dict[str, str]:
    """Every path below root (folders too) -> its mode and content digest."""
    found: dict[str, str] = {}
    for current, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(current, name)
            rel = path.relative_to(root).as_posix()
            if rel in UNCOMPARED:
                continue
            st = path.lstat()
            if path.is_symlink():
                found[rel] = f"link {os.readlink(path)}"
            elif path.is_dir():
                found[rel] = f"dir {st.st_mode:o}"
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
                found[rel] = f"file {st.st_mode:o} {digest}"
    return found


def changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    keys = sorted(set(before) | set(after))
    return [k for k in keys if before.get(k) != after.get(k)]


def pwned_under(base: Path) -> list[str]:
    return sorted(str(p.relative_to(base)) for p in base.rglob("PWNED*"))


async def run_corpus(settings: dict[str, Any], base: Path) -> list[dict[str, Any]]:
    problems: list[str] = []
    config = structure_config(settings, problems, Config())
    assert not problems, problems
    root = base / "repo"
    make_repository(root)
    pristine = state_of(root)
    prompts: list[str] = []

    async def deny(request: ApproveParams) -> dict[str, Any]:
        prompts.append(request.title)
        return {"decision": "deny", "reason": "the corpus runner denies every approval"}

    dirs = Dirs(state=base / "state", config=base / "config")
    runtime, lifecycle = build_runtime([root], config, dirs=dirs, asker=deny, long_lived=False)
    results = []
    for index, command in enumerate(commands()):
        asked = len(prompts)
        result = await runtime.call(
            CallParams(name="bash", arguments={"command": command}, session=f"s{index}")
        )
        after = state_of(root)
        text = "\n".join(p.get("text", "") for p in result.content if p.get("type") == "text")
        results.append(
            {
                "command": command,
                "code": result.error.code if result.error is not None else None,
                "text": text[:400],
                "changed": changes(pristine, after),
                "pwned": pwned_under(base),
                "prompts": prompts[asked:],
            }
        )
        if after != pristine or pwned_under(base):
            for stray in base.rglob("PWNED*"):
                if stray.is_dir() and not stray.is_symlink():
                    shutil.rmtree(stray)
                else:
                    stray.unlink()
            make_repository(root)
            pristine = state_of(root)
    await lifecycle.shutdown()
    return results


def main() -> None:
    settings, base = json.loads(sys.argv[1]), Path(sys.argv[2])
    for row in asyncio.run(run_corpus(settings, base)):
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
