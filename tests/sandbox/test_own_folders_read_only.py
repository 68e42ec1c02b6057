"""toolhost's own state and config folders stay read-only to sandboxed commands where a
root holds them (a home folder the user allowed as a root): a command cannot rewrite the
trust records, the audit log or the user's config that its server reads."""

from __future__ import annotations

from pathlib import Path

import attrs

from lsp_server.sandbox.bubblewrap import BubblewrapLayout
from lsp_server.sandbox.plan import plan_command
from lsp_server.sandbox.service import SandboxService
from lsp_server.shell.runner import RunLimits, run_command
from tests.conftest import missing_part

LIMITS = RunLimits(timeout_seconds=60, kill_grace_seconds=1.0, pipe_wait_seconds=2.0)


def test_the_service_binds_only_the_own_folders_a_root_holds(bwrap: str, tmp_path: Path) -> None:
    root = tmp_path / "home"
    inside, outside = root / ".local" / "state" / "toolhost", tmp_path / "config" / "toolhost"
    service = SandboxService([inside, outside])
    launcher = service.launcher(plan_command("workspace-write", None), [root], [".git"])
    if not isinstance(launcher, BubblewrapLayout):
        missing_part("bubblewrap cannot start here")
    assert launcher.read_only_within == (inside,)


async def test_an_own_folder_inside_the_root_is_read_only(layout: BubblewrapLayout) -> None:
    root = layout.roots[0]
    state = root / ".local" / "state" / "toolhost"
    state.mkdir(parents=True)
    (state / "trust.json").write_text("{}\n")
    confined = attrs.evolve(layout, read_only_within=(state,))
    command = "echo x > notes.txt; echo '{\"evil\": 1}' > .local/state/toolhost/trust.json"
    result = await run_command(command, root, LIMITS, launcher=confined)
    assert "Read-only file system" in result.output
    assert (root / "notes.txt").read_text() == "x\n"
    assert (state / "trust.json").read_text() == "{}\n"
