"""Files that make other programs run code are read-only in the sandbox whether or not they
exist (issue 41 item 2), under real bubblewrap: a missing one cannot be created, and the
placeholder that holds it leaves no trace, with commands running at once from one server
or from two."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import attrs
import pytest

from lsp_server.sandbox.bubblewrap import BubblewrapLayout
from lsp_server.sandbox.placeholders import MARK_NS, PlaceholderHolds, is_placeholder
from lsp_server.sandbox.protected import ProtectedPaths
from lsp_server.shell.runner import CommandResult, RunLimits, run_command

LIMITS = RunLimits(timeout_seconds=60, kill_grace_seconds=1.0, pipe_wait_seconds=2.0)
# Each waits (bounded) for a file the test or the other command creates.
_WAIT = "for i in $(seq 2000); do [ -e {0} ] && break; sleep 0.01; done; [ -e {0} ]"


def _root(layout: BubblewrapLayout) -> Path:
    return layout.roots[0]


async def _run(layout: BubblewrapLayout, command: str, cwd: Path | None = None) -> CommandResult:
    return await run_command(command, cwd or _root(layout), LIMITS, launcher=layout)


def _listing(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


ESCALATIONS = {
    "git": "git init -q && git config core.fsmonitor 'touch PWNED'",
    "vscode": "mkdir .vscode && echo {} > .vscode/tasks.json",
    "envrc": "echo x > .envrc",
    "python": "python3 -c \"open('.toolhost.toml','w')\"",
    "computed": "n=.toolhost.toml; echo W3BvbGljeV0K | base64 -d > $n",
    "claude": "mkdir -p .claude && echo '{\"hooks\": {}}' > .claude/settings.json",
    "nvim": "echo 'os.execute(\"x\")' > .nvim.lua",
}


@pytest.mark.parametrize("name", sorted(ESCALATIONS))
async def test_missing_protected_names_cannot_be_created(
    layout: BubblewrapLayout, name: str
) -> None:
    root = _root(layout)
    (root / "src").mkdir()
    before = _listing(root)
    result = await _run(layout, ESCALATIONS[name])
    assert result.exit_code != 0, result.output
    assert _listing(root) == before  # nothing made, no placeholder left
    assert not (root / "PWNED").exists()
    # Ordinary writes still work, the top of the root included.
    result = await _run(layout, "echo x > made.txt && mkdir -p src/new && echo y > src/new/f")
    assert result.exit_code == 0, result.output
    assert _listing(root) == before | {"made.txt", "src/new", "src/new/f"}


async def test_git_still_finds_an_enclosing_repository(bwrap: str) -> None:
    # The .git placeholder is an empty folder: git looks past it (a file would stop it).
    # Not under /tmp: the sandbox's private /tmp would hide the enclosing folder.
    outer = Path(tempfile.mkdtemp(prefix="toolhost-enclosing-", dir="/var/tmp")).resolve()
    try:
        root = outer / "project"
        root.mkdir()
        subprocess.run(["git", "init", "-q", str(outer)], check=True)
        layout = BubblewrapLayout(bwrap=bwrap, roots=(root,), writable=True)
        result = await _run(layout, "git rev-parse --show-toplevel && git init -q")
        assert result.output.splitlines()[0] == str(outer), result.output
        assert result.exit_code != 0  # but no repository of its own
        assert sorted(os.listdir(root)) == []
    finally:
        shutil.rmtree(outer)


async def test_concurrent_commands_share_the_placeholders(layout: BubblewrapLayout) -> None:
    """A ends while B runs: A must not remove what B still holds (removing a placeholder
    would lift B's read-only mount). B runs under another server's holds."""
    root = _root(layout)
    other_server = attrs.evolve(layout, holds=PlaceholderHolds())
    first = asyncio.create_task(
        _run(layout, f"touch a-started; {_WAIT.format('b-started')}; echo x > .envrc")
    )
    second = asyncio.create_task(
        _run(
            other_server,
            f"touch b-started; {_WAIT.format('a-done')}; echo y > .envrc; echo rc=$?;"
            " mkdir .vscode; echo rc=$?",
        )
    )
    a = await first
    assert a.exit_code != 0 and "Read-only file system" in a.output, a.output
    # B still runs: the placeholder stays, as toolhost made it.
    assert is_placeholder(root / ".envrc") and is_placeholder(root / ".vscode")
    (root / "a-done").touch()
    b = await second
    assert b.output.count("rc=1") == 2, b.output
    assert _listing(root) == {"a-started", "b-started", "a-done"}
    assert layout.holds.in_flight() == other_server.holds.in_flight() == 0


async def test_many_commands_at_once_leave_nothing(layout: BubblewrapLayout) -> None:
    root = _root(layout)
    servers = [layout, attrs.evolve(layout, holds=PlaceholderHolds())]
    results = await asyncio.gather(
        *(
            _run(servers[i % 2], f"echo {i} > out-{i}; echo x > .envrc || echo refused-{i}")
            for i in range(12)
        )
    )
    for i, result in enumerate(results):
        assert f"refused-{i}" in result.output, result.output
    assert _listing(root) == {f"out-{i}" for i in range(12)}


async def test_a_leftover_placeholder_is_adopted_and_a_real_file_kept(
    layout: BubblewrapLayout,
) -> None:
    root = _root(layout)
    left = root / ".npmrc"  # as a killed server would leave it
    left.touch()
    os.utime(left, ns=(MARK_NS, MARK_NS))
    mine = root / ".envrc"
    mine.write_text("")  # the user's own empty file
    result = await _run(layout, "echo 'script-shell=x' > .npmrc; echo x > .envrc")
    assert result.exit_code != 0
    assert not left.exists()
    assert mine.exists() and mine.read_text() == ""


async def test_nested_protected_files_and_a_venv_pip_conf(layout: BubblewrapLayout) -> None:
    root = _root(layout)
    subprocess.run(["git", "init", "-q", str(root / "sub")], check=True)
    (root / "tools").mkdir()
    (root / "tools" / ".envrc").write_text("# mine\n")
    (root / ".venv").mkdir()
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    before = _listing(root)
    for command in (
        "git -C sub config core.fsmonitor 'touch PWNED'",
        "echo evil >> tools/.envrc",
        "printf '[global]\\nindex-url = http://evil\\n' > .venv/pip.conf",
    ):
        result = await _run(layout, command)
        assert result.exit_code != 0, (command, result.output)
    assert _listing(root) == before
    assert (root / "tools" / ".envrc").read_text() == "# mine\n"


async def test_configured_names_are_protected_too(layout: BubblewrapLayout) -> None:
    root = _root(layout)
    custom = attrs.evolve(layout, protected=ProtectedPaths.with_extra(["run-on-open.sh", "hooks/"]))
    result = await _run(custom, "echo x > run-on-open.sh || mkdir hooks || echo refused")
    assert "refused" in result.output
    assert _listing(root) == set()


async def test_read_only_mode_needs_no_placeholder(layout: BubblewrapLayout) -> None:
    root = _root(layout)
    read_only = attrs.evolve(layout, writable=False)
    result = await _run(read_only, "ls -A; echo x > .envrc")
    assert result.exit_code != 0 and result.output.startswith("bash:"), result.output
    assert _listing(root) == set()


def test_checkpoints_leave_placeholders_of_other_commands_out() -> None:
    """A command's checkpoint must not list (nor its revert remove) the placeholders that a
    command running meanwhile made: removing one would lift that command's mount."""
    from lsp_server.checkpoints.file_states import EMPTY_BLOB, is_placeholder_change
    from lsp_server.checkpoints.shadow.tree_changes import Entry, TreeChange

    empty, other = Entry(EMPTY_BLOB, 0o100644), Entry("1" * 40, 0o100644)
    assert is_placeholder_change(TreeChange("A", ".envrc", None, empty))
    assert is_placeholder_change(TreeChange("D", ".toolhost.toml", empty, None))
    assert is_placeholder_change(TreeChange("A", ".venv/pip.conf", None, empty))
    assert not is_placeholder_change(TreeChange("A", ".envrc", None, other))  # has content
    assert not is_placeholder_change(TreeChange("A", "sub/.envrc", None, empty))
    assert not is_placeholder_change(TreeChange("A", "notes.txt", None, empty))
    assert not is_placeholder_change(TreeChange("M", ".envrc", other, empty))


async def test_a_folder_toolhost_cannot_create_in_is_bound_read_only(
    layout: BubblewrapLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent's earlier command left the root without write permission (`chmod a-w .`):
    toolhost cannot make the placeholders, and the command must not be able to give the
    permission back and create the names, so the root is read-only for it (a bind mount
    is read-only with all it holds): it fails closed until the user restores the mode."""
    from lsp_server.sandbox import placeholders

    def refused(parent_fd: int, name: str, kind: str) -> int | None:
        raise PermissionError(13, "Permission denied", name)

    monkeypatch.setattr(placeholders, "_create", refused)  # root ignores the mode bits
    root = _root(layout)
    (root / "src").mkdir()
    result = await _run(layout, "chmod u+w . ; echo x > .envrc; echo rc=$?; echo y > src/f")
    assert "rc=1" in result.output and "Read-only file system" in result.output, result.output
    assert _listing(root) == {"src"}


async def test_a_folder_holding_protected_files_cannot_be_swapped(
    layout: BubblewrapLayout,
) -> None:
    """`mv sub sub2 && mkdir sub` would put an unprotected sub/.envrc or a copied repository
    whose config the command then changes where the user's were: the folder is pinned."""
    root = _root(layout)
    subprocess.run(["git", "init", "-q", str(root / "sub")], check=True)
    (root / "sub" / ".envrc").write_text("# mine\n")
    (root / "sub" / "code.py").write_text("x = 1\n")
    before = _listing(root)
    result = await _run(layout, "mv sub sub2 && mkdir sub && echo evil > sub/.envrc")
    assert result.exit_code != 0 and "busy" in result.output, result.output
    result = await _run(layout, "cp -a sub sub3 && git -C sub3 config core.fsmonitor x")
    assert result.exit_code == 0, result.output  # a copy elsewhere is not the user's repo
    assert _listing(root) - before == {p for p in _listing(root) if p.startswith("sub3")}
    result = await _run(layout, "echo y > sub/code.py && mkdir sub/new")  # still writable
    assert result.exit_code == 0, result.output
    assert (root / "sub" / ".envrc").read_text() == "# mine\n"
