"""The hard-linked files among many, found by a child process (GNU stat through xargs)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from lsp_server.checkpoints.watching import root_budget
from lsp_server.checkpoints.watching.links_apart import linked_apart

ODD_NAMES = ["plain", "with space", "-dash", "new\nline", "caf\xe9", "bad-\udcff-byte", "1 one"]


def _tree(root: Path) -> list[str]:
    (root / "sub").mkdir(parents=True)
    names = []
    for name in ODD_NAMES:
        (root / "sub" / name).write_bytes(b"x")
        names.append(f"sub/{name}")
    return names


def test_the_hard_linked_among_odd_names_and_gone_files(tmp_path: Path) -> None:
    root = tmp_path / "root"
    names = _tree(root)
    outside = tmp_path / "elsewhere"
    for name in ("with space", "-dash", "new\nline", "bad-\udcff-byte", "1 one"):
        os.link(root / "sub" / name, outside.with_name(f"elsewhere-{len(name)}-{name[:3]}"))
    found = linked_apart(str(root), [*names, "sub/gone", "no/such/folder"])
    assert found == {
        "sub/with space",
        "sub/-dash",
        "sub/new\nline",
        "sub/bad-\udcff-byte",
        "sub/1 one",
    }
    assert found == root_budget.linked(str(root), names)


def test_many_files_and_none_linked(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    names = [f"f{n:05d}" for n in range(25_000)]  # several batches of names, several stats
    for name in names:
        (root / name).touch()
    os.link(root / "f24999", tmp_path / "other")
    assert linked_apart(str(root), names) == {"f24999"}
    assert linked_apart(str(root), []) == set()


def test_without_the_tools_it_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "root"
    names = _tree(root)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert linked_apart(str(root), names) is None


def test_links_among_many_looks_in_process_when_the_child_cannot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    names = [f"f{n}" for n in range(1500)]  # enough for the background thread
    for name in names:
        (root / name).touch()
    os.link(root / "f7", tmp_path / "other")
    monkeypatch.setattr(root_budget, "linked_apart", lambda root, files: None)
    later: list[set[str]] = []
    assert root_budget.links_among(str(root), names, later.append) == set()
    for thread in threading.enumerate():
        if thread.name == "hard links":
            thread.join(60)
    assert later == [{"f7"}]


def test_no_program_of_the_workspace_runs_in_place_of_the_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent can write `xargs` and `stat` into the root; with the root, a folder in it or
    "." on PATH, the system's are still the ones that run (the child runs in the root)."""
    root = tmp_path / "root"
    names = _tree(root)
    ran = tmp_path / "ran"
    for folder in (root, root / "bin"):
        folder.mkdir(exist_ok=True)
        for tool in ("xargs", "stat"):
            (folder / tool).write_text(f"#!/bin/sh\ntouch {ran}\n")
            (folder / tool).chmod(0o755)
    monkeypatch.setenv("PATH", f".::{root}:{root / 'bin'}:{os.environ['PATH']}")
    os.link(root / "sub" / "plain", tmp_path / "other")
    assert linked_apart(str(root), names) == {"sub/plain"}
    assert not ran.exists()
