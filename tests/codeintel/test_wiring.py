"""Server wiring of the index: watcher registration and change notes."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from lsp_server.codeintel.indexes import CodeIndexService
from lsp_server.server.watch import note_watched_changes, watched_files_registration
from tests.helpers import make_runtime


def test_registration_watches_every_indexed_extension() -> None:
    registration = watched_files_registration().registrations[0]
    assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    options = registration.register_options
    assert isinstance(options, types.DidChangeWatchedFilesRegistrationOptions)
    patterns = [w.glob_pattern for w in options.watchers]
    assert "**/.gitignore" in patterns
    assert any(isinstance(p, str) and "py," in p and "rs," in p for p in patterns)


def test_watched_changes_are_noted_and_applied_before_the_next_query(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("def one(): pass\n", encoding="utf-8")
    runtime = make_runtime(root, long_lived=True)
    service = runtime.services.get(CodeIndexService)
    assert service.background_builds
    index = service.index_for(root)
    index.refresh()
    (root / "b.py").write_text("def two(): pass\n", encoding="utf-8")
    note_watched_changes(
        runtime,
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=(root / "b.py").as_uri(), type=1)]
        ),
    )
    assert index.parse_count == 1  # noted only: nothing parsed on the event loop
    index.apply_changes()
    assert [s.name for _, s in index.search("two")] == ["two"]
    status = service.status()["roots"][0]
    assert (status["files"], status["complete"]) == (2, True)
    service.close()
