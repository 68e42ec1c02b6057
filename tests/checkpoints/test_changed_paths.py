"""The watcher's changed paths added to the shadow index (shadow/changed_paths.py): a name
made and removed within one command is not asked of git (`git rm --cached`) when the last
snapshot surely did not hold it, also where that snapshot's trees are the user's (seeded:
read through `git cat-file`); one the last snapshot held is removed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.checkpoints.shadow.isolated_git import IsolatedGit
from lsp_server.config.tree import CheckpointsConfig
from lsp_server.fs.workspace import Workspace

pytestmark = pytest.mark.timeout(120)


async def command(checkpoints: Checkpoints, call_id: str, script: str, root: Path) -> list[str]:
    window = await checkpoints.before_command(call_id, "s", "bash", script)
    subprocess.run(["sh", "-c", script], cwd=root, check=True)
    made = await checkpoints.after_command(window)
    await checkpoints.settle()
    return sorted(f"{f.path} {f.change}" for c in made for f in c.files)


@pytest.mark.parametrize("seeded", [True, False])
async def test_a_name_made_and_removed_asks_git_nothing(
    tmp_path: Path, seeded: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    for n in range(5):
        (root / "pkg" / f"m{n}.py").write_text(f"{n}\n")
    git = ["git", "-c", "user.name=u", "-c", "user.email=u@x"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "one"]):
        subprocess.run([*git, *args], cwd=root, check=True)
    config = CheckpointsConfig(seed_from_git=seeded)
    checkpoints = Checkpoints(Workspace([root]), config, tmp_path / "state")
    await command(checkpoints, "c-1", "true", root)
    runs: list[tuple[str, ...]] = []
    run = IsolatedGit.run

    def counted(self: IsolatedGit, *args: str, **kwargs: object) -> bytes:
        runs.append(args)
        return run(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(IsolatedGit, "run", counted)
    made = await command(
        checkpoints, "c-2", "echo t > pkg/tmp.txt && rm pkg/tmp.txt && echo x >> pkg/m1.py", root
    )
    assert made == ["pkg/m1.py modified"]
    assert checkpoints.watchers.scans[root] == "changed paths"
    assert not [args for args in runs if "rm" in args]
    made = await command(checkpoints, "c-3", "rm pkg/m2.py", root)  # held: removed
    assert made == ["pkg/m2.py deleted"]
    assert [args for args in runs if "rm" in args]
    checkpoints.watchers.close()
