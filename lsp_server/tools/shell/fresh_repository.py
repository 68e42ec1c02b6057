"""A repository a sandboxed command made below the top of a root (`git clone URL dir`,
`git init dir`): its `.git` is kept when nothing in it can make the user's own git run a
program, else it is renamed aside like every protected name (protected_made.py).

Nothing in it may run a program when the user runs git there later (outside the sandbox):
- `.git` is a folder (not a `gitdir:` file pointing elsewhere), with no `commondir` (whose
  repository's config git would read) and no `config.worktree`;
- every `config` file in it (the repository's, and each submodule's under `modules/`)
  holds only keys on a short list of plain settings (remotes' url and fetch, branches'
  remote and merge, the core flags git writes itself): no `core.fsmonitor`, hooks path,
  editor, pager, ssh command, filter, diff or merge driver, credential helper, include,
  alias ...;
- every hook is one of git's `*.sample` files, which git never runs.
The config is read by `git config --file --no-includes --list`, which parses and runs
nothing.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

SAFE_KEYS = re.compile(
    r"^(core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase"
    r"|precomposeunicode|symlinks)"
    r"|extensions\.objectformat"
    r"|remote\..+\.(url|fetch)"
    r"|branch\..+\.(remote|merge)"
    r"|submodule\..+\.(url|active))$"
)
_READ_TIMEOUT = 10.0


def harmless(git_folder: Path) -> bool:
    """Whether a `.git` a command made can stay: nothing in it runs a program (above)."""
    if git_folder.is_symlink() or not git_folder.is_dir():
        return False
    for folder, dirs, files in os.walk(git_folder, followlinks=False):
        here = Path(folder)
        if here.name in ("objects", "refs", "logs") and here.parent.name != "hooks":
            dirs[:] = []  # only data
            continue
        if "commondir" in files or "config.worktree" in files:
            return False
        if "config" in files and not _plain_config(here / "config"):
            return False
        if here.name == "hooks" and not _only_samples(here, files, dirs):
            return False
        if any((here / name).is_symlink() for name in (*files, *dirs)):
            return False
    return True


def _only_samples(folder: Path, files: list[str], dirs: list[str]) -> bool:
    return not dirs and all(name.endswith(".sample") for name in files)


def _plain_config(path: Path) -> bool:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_CONFIG_NOSYSTEM": "1"}
    env |= {"HOME": "/nonexistent", "GIT_CONFIG_GLOBAL": "/dev/null"}
    try:
        done = subprocess.run(
            ["git", "config", "--file", str(path), "--no-includes", "--list", "--null"],
            capture_output=True,
            env=env,
            timeout=_READ_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    if done.returncode != 0:
        return False
    for entry in done.stdout.split(b"\0"):
        if not entry:
            continue
        key = entry.split(b"\n", 1)[0].decode("utf-8", "replace").lower()
        if not SAFE_KEYS.match(key):
            return False
    return True
