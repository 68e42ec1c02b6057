"""The secret files of a root with a huge folder in it are found reading that folder as
it streams, once, within the walk's budget: the first call on a root of a million entries
neither lists it whole twice nor holds it (it took ~12 s and ~225 MB before)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lsp_server.fs.workspace import Workspace
from lsp_server.secrets import sources
from lsp_server.secrets.names import CredentialNames
from lsp_server.secrets.sources import SecretFiles

Walk = Callable[[], None]


@pytest.fixture
def read(monkeypatch: pytest.MonkeyPatch) -> Counter[Path]:
    """How many entries each folder handed over."""
    counts: Counter[Path] = Counter()
    entries = sources._entries

    def counted(folder: Path) -> Iterator[os.DirEntry[str]]:
        for entry in entries(folder):
            counts[folder] += 1
            yield entry

    monkeypatch.setattr(sources, "_entries", counted)
    return counts


def big_root(tmp_path: Path, files: int) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    for n in range(files):
        (root / f"f{n:05}.txt").write_bytes(b"")
    (root / ".env").write_text("API_TOKEN=top-level-value-1\n")
    (root / "sub").mkdir()
    (root / "sub" / ".env").write_text("API_TOKEN=below-value-22\n")
    return root


def test_a_big_root_is_read_whole_once(
    tmp_path: Path, read: Counter[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sources, "FIRST_WALK_ENTRIES", 100)
    monkeypatch.setattr(sources, "MAX_ENTRIES", 1000)
    root = big_root(tmp_path, 3000)
    walks: list[Walk] = []
    files = SecretFiles(Workspace([root]), CredentialNames(), background=walks.append)
    first = {s.value for s in files.refresh()}
    assert "top-level-value-1" in first  # the top level, whatever the budget
    assert read[root] <= 101 + 3002  # the budgeted walk, then one pass of the top level
    read.clear()
    assert len(walks) == 1
    walks[0]()  # the background walk: within its budget
    assert read[root] <= 1001
    read.clear()
    assert "top-level-value-1" in {s.value for s in files.refresh()}
    assert read[root] == 0  # the walk's return does not read the root again
    (root / "new.pem").write_text("MIIEowIBAAKCAQEAx1234567890abcdef\n")
    assert "MIIEowIBAAKCAQEAx1234567890abcdef" in {s.value for s in files.refresh()}
    assert read[root] == 3003  # the root changed: read once more, whole


def test_a_small_root_is_read_once_and_found_whole(tmp_path: Path, read: Counter[Path]) -> None:
    root = big_root(tmp_path, 20)
    files = SecretFiles(Workspace([root]), CredentialNames(), background=lambda walk: walk())
    found = {s.value for s in files.refresh()}
    assert found == {"top-level-value-1", "below-value-22"}
    assert read[root] == 22  # the walk read it whole: no second listing of the top level
    assert files.refresh() == files.secrets and read[root] == 22
