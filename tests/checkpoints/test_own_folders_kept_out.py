"""toolhost's own folders (state, config) inside a root (a home folder the user allowed as a
root): no snapshot records them, ignored or not, and the watcher neither watches nor
reports them, so a root never snapshots the shadow repository that snapshots it."""

from __future__ import annotations

from pathlib import Path

from lsp_server.checkpoints.records import CheckpointStore
from lsp_server.checkpoints.shadow.ignored import IgnoredFiles
from lsp_server.checkpoints.watching.watcher import TreeWatcher


def tree_files(store: CheckpointStore, tree: str) -> set[str]:
    listed = store.repo.git.run("ls-tree", "-r", "--name-only", tree).decode()
    return set(listed.splitlines())


def test_snapshots_leave_the_state_and_config_folders_out(tmp_path: Path) -> None:
    root = tmp_path / "home"
    state = root / ".local" / "state" / "toolhost"
    config = root / ".config" / "toolhost"
    (state / "index").mkdir(parents=True)
    config.mkdir(parents=True)
    (root / ".gitignore").write_text("*.db\n")
    (root / "notes.txt").write_text("mine\n")
    (root / "local.db").write_text("ignored, recorded within the budget\n")
    (state / "audit.jsonl").write_text("{}\n")
    (state / "index" / "symbols.db").write_text("ignored and toolhost's\n")
    (config / "config.toml").write_text("[workspace]\n")
    (root / ".config" / "other.toml").write_text("another program's\n")

    store = CheckpointStore(state, root, 1024 * 1024, keep_out=[config])
    store.ensure()
    IgnoredFiles(store.repo, 1024 * 1024, ()).record()
    tree = store.repo.snapshot()
    assert tree_files(store, tree) == {".gitignore", "notes.txt", "local.db", ".config/other.toml"}
    assert store.repo.kept_out == [".local/state/toolhost", ".config/toolhost"]

    # Changed paths (the watcher's way) leave them out as well.
    (state / "audit.jsonl").write_text("{}\n{}\n")
    (state / "new.db").write_text("made later\n")
    IgnoredFiles(store.repo, 1024 * 1024, ()).record([".local/state/toolhost/new.db"])
    again = store.repo.snapshot_paths([".local", "notes.txt"])
    assert tree_files(store, again) == tree_files(store, tree)


def test_the_watcher_neither_watches_nor_reports_them(tmp_path: Path) -> None:
    root = tmp_path / "home"
    state = root / ".local" / "state" / "toolhost"
    state.mkdir(parents=True)
    watcher = TreeWatcher(root, [".local/state/toolhost"])
    try:
        assert watcher.take().rescan is not None  # just started: a full scan first
        (state / "audit.jsonl").write_text("{}\n")
        (state / "checkpoints").mkdir()
        (root / "notes.txt").write_text("mine\n")
        changed = watcher.take()
        assert changed.rescan is None
        assert changed.paths == {"notes.txt"}
        # Made again after the watcher started: still neither watched nor reported.
        (state / "audit.jsonl").unlink()
        (state / "checkpoints").rmdir()
        state.rmdir()
        state.mkdir()
        (state / "audit.jsonl").write_text("{}\n")
        assert watcher.take().paths == set()
        assert all("toolhost" not in folder for folder in watcher._folders.values())
    finally:
        watcher.close()
