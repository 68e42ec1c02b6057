"""git run on a shadow repository and never on the user's (blocking; call in a thread).

git runs with its own GIT_DIR, GIT_INDEX_FILE and GIT_WORK_TREE, no system or global
configuration (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null, HOME inside the shadow
folder) and hooks switched off, so the user's repository (its HEAD, index, refs, hooks and
config) is never read for state nor written. git itself skips every `.git` entry of the work
tree.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from lsp_server.procs.children import parent_death_hook

# fsync = none: a checkpoint lost to a power cut is not worth an fsync per object (100
# changed files took a second with git's default here).
# splitIndex: a snapshot of a few files writes a small index beside a shared one instead of
# the whole index of a large tree, and write-tree reads less (docs/BENCHMARKS.md, target 5);
# the shared index replaced by a new one goes at once (every git run here holds the lock).
_CONFIG = """\
[core]
\trepositoryformatversion = 0
\tbare = false
\thooksPath = /dev/null
\tuntrackedCache = true
\tautocrlf = false
\tsafecrlf = false
\tfilemode = true
\tsymlinks = true
\tquotePath = false
\tfsmonitor = false
\tlogAllRefUpdates = false
\tlooseCompression = 1
\tfsync = none
\tsplitIndex = true
[splitIndex]
\tsharedIndexExpire = now
[gc]
\tauto = 0
\tpackRefs = false
\treflogExpire = now
[maintenance]
\tauto = false
[index]
\tversion = 4
[advice]
\taddEmbeddedRepo = false
\taddIgnoredFile = false
[user]
\tname = toolhost
\temail = toolhost@localhost
"""


class ShadowError(Exception):
    """git failed in the shadow repository (the message is git's)."""


# The commands that walk a whole root (and may take minutes there).
_WALKING = frozenset(("add", "ls-files", "gc"))


def _ends_with_the_server(args: Sequence[str], long: bool) -> Callable[[], None] | None:
    """Nothing outlives the server: a first `git add -A` of a large root went on writing
    objects into the state folder after it had exited. A git that walks the root (or is
    `long`: one given every file of a walk) gets a parent-death SIGTERM (git removes its
    index.lock then); the others, short and on the writers' path, are spawned without a
    hook: with one, each spawn is a fork of the whole server instead of a vfork
    (bench/writers_load.py, one run: 0.71x the rate with checkpoints off, against 0.86x
    without the hook)."""
    if not long and _WALKING.isdisjoint(args[:4]):
        return None
    return parent_death_hook(signal.SIGTERM)


class IsolatedGit:
    """git for the shadow repository in `folder` whose work tree is `work_tree`."""

    def __init__(self, folder: Path, work_tree: Path) -> None:
        self.folder = folder
        self.git_dir = folder / "git"
        self.index = folder / "index"
        self.work_tree = work_tree

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(
            GIT_DIR=str(self.git_dir),
            GIT_WORK_TREE=str(self.work_tree),
            GIT_INDEX_FILE=str(self.index),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_TERMINAL_PROMPT="0",
            HOME=str(self.folder),
            XDG_CONFIG_HOME=str(self.folder),
            LC_ALL="C",
        )
        return env

    def run(
        self, *args: str, data: bytes | None = None, ok: Sequence[int] = (0,), long: bool = False
    ) -> bytes:
        """git `args` (raises ShadowError unless its exit code is in `ok`); `long`: it may
        take as long as a walk of the root (it ends with the server too)."""
        command = ["git", "-c", "core.hooksPath=/dev/null", *args]
        done = subprocess.run(
            command,
            input=data,
            capture_output=True,
            env=self.environment(),
            cwd=self.work_tree,
            check=False,
            preexec_fn=_ends_with_the_server(args, long),
        )
        if done.returncode not in ok:
            message = done.stderr.decode("utf-8", "replace").strip()
            raise ShadowError(f"git {args[0]} failed ({done.returncode}): {message}")
        return done.stdout

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One writer at a time across processes (the server and `toolhost revert`)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with (self.folder / "lock").open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def exists(self) -> bool:
        return (self.git_dir / "HEAD").exists()

    def init(self) -> None:
        """Create the repository if it is not there; its configuration is ours."""
        if not self.exists():
            self.folder.mkdir(parents=True, exist_ok=True)
            done = subprocess.run(
                ["git", "init", "--quiet", "--template=", str(self.git_dir)],
                env={**self.environment(), "GIT_WORK_TREE": str(self.folder)},
                check=False,
                capture_output=True,
                cwd=self.folder,
            )
            if done.returncode != 0:
                raise ShadowError(f"git init failed: {done.stderr.decode(errors='replace')}")
        config = self.git_dir / "config"
        if config.read_text() != _CONFIG:
            config.write_text(_CONFIG)
