"""git inside a sandboxed command does not list toolhost's placeholders (the empty names
that hold .envrc, .npmrc, .vscode ... read-only while the command runs) as untracked files,
while the user's own info/exclude and the real untracked files stay as they are."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from lsp_server.sandbox.bubblewrap import BubblewrapLayout
from lsp_server.shell.runner import RunLimits, run_command

LIMITS = RunLimits(timeout_seconds=60, kill_grace_seconds=1.0, pipe_wait_seconds=2.0)
STATUS = "touch written.txt && git status --porcelain --untracked-files=all"


def _repository(root: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "notes.txt").write_text("mine\n")
    return root / ".git" / "info" / "exclude"


async def test_git_in_the_sandbox_does_not_list_placeholders(layout: BubblewrapLayout) -> None:
    root = layout.roots[0]
    exclude = _repository(root)
    before = exclude.read_bytes()
    result = await run_command(STATUS, root, LIMITS, launcher=layout)
    assert result.exit_code == 0, result.output
    listed = {line[3:] for line in result.output.splitlines() if line.startswith("?? ")}
    assert listed == {"notes.txt", "written.txt"}, result.output
    assert exclude.read_bytes() == before  # the user's file is untouched
    # Outside the sandbox nothing was ever excluded.
    assert not (root / ".envrc").exists()


async def test_a_real_untracked_protected_file_is_still_listed(layout: BubblewrapLayout) -> None:
    root = layout.roots[0]
    _repository(root)
    (root / ".envrc").write_text("export A=1\n")
    result = await run_command(STATUS, root, LIMITS, launcher=layout)
    assert "?? .envrc" in result.output.splitlines(), result.output


async def test_an_exclude_that_is_a_link_is_not_copied(
    layout: BubblewrapLayout, tmp_path: Path
) -> None:
    root = layout.roots[0]
    exclude = _repository(root)
    outside = tmp_path / "outside-secret"
    outside.write_text("secret-line-not-for-the-command\n")
    exclude.unlink()
    os.symlink(outside, exclude)
    result = await run_command(f"{STATUS}; cat .git/info/exclude", root, LIMITS, launcher=layout)
    assert "placeholders" not in result.output, result.output
