"""The secret files of a root with a huge folder in it are found reading that folder as
it streams, once, within the walk's budget: the first call on a root of a million entries
neither lists it whole twice nor holds it (it took ~12 s and ~225 MB before)."""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lsp_server.fs.workspace import Workspace
from lsp_server.secrets import file_walk, sources
from lsp_server.secrets.names import CredentialNames
from lsp_server.secrets.sources import SecretFiles
from tests.helpers import in_own_mounts

Walk = Callable[[], None]


@pytest.fixture
def read(monkeypatch: pytest.MonkeyPatch) -> Counter[Path]:
    """How many entries each folder handed over."""
    counts: Counter[Path] = Counter()
    entries = file_walk.listed_entries

    def counted(folder: str) -> Iterator[os.DirEntry[str]]:
        for entry in entries(folder):
            counts[Path(folder)] += 1
            yield entry

    monkeypatch.setattr(file_walk, "listed_entries", counted)
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


# A rescan lists again only the folders that changed (file_walk.py).


@pytest.fixture
def listed(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The folders listed, in order (however many entries each handed over)."""
    folders: list[Path] = []
    entries = file_walk.listed_entries

    def counted(folder: str) -> Iterator[os.DirEntry[str]]:
        folders.append(Path(folder))
        return entries(folder)

    monkeypatch.setattr(file_walk, "listed_entries", counted)
    return folders


KEY_LINE = "MIIEowIBAAKCAQEAkey1234567890abcdef"


def aged(*folders: Path) -> None:
    """The folders last changed an hour ago, as folders that sit there: their stamps are
    trusted (a folder changed within MARGIN_NS of a walk is listed by the next one too:
    file_walk.py). Their mtime is new all the same: a change."""
    past = time.time_ns() - 3600 * 10**9
    for folder in folders:
        os.utime(folder, ns=(past, past))


def aged_tree(root: Path) -> Path:
    aged(root, *(path for path in root.rglob("*") if path.is_dir()))
    return root


def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for folder in ("a/b/c", "a/d", "e"):
        (root / folder).mkdir(parents=True)
        for n in range(5):
            (root / folder / f"f{n}.txt").write_bytes(b"")
    (root / "a" / "b" / "id_rsa").write_text(f"{KEY_LINE}\n")
    (root / "e" / ".env").write_text("API_TOKEN=in-e-value-333\n")
    return aged_tree(root)


class Rescans:
    """A SecretFiles whose periodic walk runs when the test says (`rescan`)."""

    def __init__(self, root: Path) -> None:
        self.clock = 0.0
        self.files = SecretFiles(
            Workspace([root]),
            CredentialNames(),
            clock=lambda: self.clock,
            background=lambda walk: walk(),
        )

    def rescan(self) -> dict[str, str]:
        """The values known after the next periodic walk, by name."""
        self.clock += sources.RESCAN_SECONDS
        return {s.value: s.name for s in self.files.refresh()}


def test_a_rescan_of_an_unchanged_tree_lists_no_folder(tmp_path: Path, listed: list[Path]) -> None:
    root = tree(tmp_path)
    files = Rescans(root)
    first = {s.value for s in files.files.refresh()}
    assert first == {KEY_LINE, "in-e-value-333"}
    assert len(listed) == 6  # the first walk: every folder once
    listed.clear()
    for _ in range(3):
        assert set(files.rescan()) == first
    assert listed == []  # a stat of each, no listing


def test_a_new_file_deep_down_is_found_listing_only_its_folder(
    tmp_path: Path, listed: list[Path]
) -> None:
    root = tree(tmp_path)
    files = Rescans(root)
    files.files.refresh()
    listed.clear()
    (root / "a" / "b" / "c" / ".env").write_text("API_TOKEN=three-deep-value-1\n")
    aged(root / "a" / "b" / "c")
    assert files.rescan()["three-deep-value-1"] == "a/b/c/.env:API_TOKEN"
    assert listed == [root / "a" / "b" / "c"]
    listed.clear()
    (root / "e" / "new" / "x").mkdir(parents=True)
    (root / "e" / "new" / "x" / "server.pem").write_text("MIIEnewfolder0123456789abcdef\n")
    aged(root / "e", root / "e" / "new", root / "e" / "new" / "x")
    assert files.rescan()["MIIEnewfolder0123456789abcdef"] == "e/new/x/server.pem"
    assert sorted(listed) == [root / "e", root / "e" / "new", root / "e" / "new" / "x"]


def test_a_deleted_key_file_and_a_folder_renamed_away_are_dropped(
    tmp_path: Path, listed: list[Path]
) -> None:
    root = tree(tmp_path)
    files = Rescans(root)
    files.files.refresh()
    walk = files.files._walk
    listed.clear()
    (root / "a" / "b" / "id_rsa").unlink()
    aged(root / "a" / "b")
    assert set(files.rescan()) == {"in-e-value-333"}
    assert listed == [root / "a" / "b"]
    listed.clear()
    (root / "e").rename(tmp_path / "e-away")
    aged(root)
    assert files.rescan() == {}  # the root's top level and the walk: one listing of it
    assert listed == [root, root]
    assert str(root / "e") not in walk.remembered()
    # Another folder moved in under the old name is listed, not taken for the old one.
    other = tmp_path / "other"
    other.mkdir()
    (other / ".env").write_text("API_TOKEN=moved-in-value-4444\n")
    aged(other)
    listed.clear()
    other.rename(root / "e")
    aged(root, root / "e")
    assert files.rescan() == {"moved-in-value-4444": "e/.env:API_TOKEN"}
    assert root / "e" in listed


def test_the_budget_bounds_a_rescan_and_it_covers_what_a_fresh_walk_would(
    tmp_path: Path, read: Counter[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unchanged folder's entries count against the budget as if listed: the rescan
    finds what a fresh walk with the same budget finds, and lists no more entries."""
    monkeypatch.setattr(sources, "FIRST_WALK_ENTRIES", 10)
    monkeypatch.setattr(sources, "MAX_ENTRIES", 40)
    root = tmp_path / "ws"
    for n in range(8):
        (root / f"d{n}").mkdir(parents=True)
        for m in range(6):
            (root / f"d{n}" / f"f{m}.txt").write_bytes(b"")
        (root / f"d{n}" / f"k{n}.pem").write_text(f"MIIEfolder{n}value0123456789\n")
    aged_tree(root)
    walks: list[Walk] = []
    files = SecretFiles(Workspace([root]), CredentialNames(), background=walks.append)
    files.refresh()
    walks.pop()()
    before = {s.value for s in files.refresh()}
    assert 0 < len(before) < 8  # the budget ran out
    read.clear()
    for n in range(8):  # every folder changed: each one's listing would cost 8 entries
        (root / f"d{n}" / "more.txt").write_bytes(b"")
    files._scanned_at = -sources.RESCAN_SECONDS
    files.refresh()
    walks.pop()()
    after = {s.value for s in files.refresh()}
    assert sum(read.values()) <= 40 + 1  # (and the one entry that shows there are more)
    fresh = SecretFiles(Workspace([root]), CredentialNames(), background=walks.append)
    fresh.refresh()
    walks.pop()()
    assert after == {s.value for s in fresh.refresh()}
    assert len(after) < 8  # still partly covered, as a fresh walk


_MOUNTED = """
import sys
from pathlib import Path
sys.path.insert(0, {repo!r})
from lsp_server.fs.workspace import Workspace
from lsp_server.secrets.names import CredentialNames
from lsp_server.secrets.sources import SecretFiles
files = SecretFiles(Workspace([Path({root!r})]), CredentialNames(), background=lambda w: w())
print(sorted(s.name for s in files.refresh()))
"""


def test_other_mounts_are_not_walked(tmp_path: Path) -> None:
    """A tmpfs mounted inside the root (in a mount namespace of the test's own): its .env
    is not found (no file of another file system is walked), the root's own is."""
    root = tmp_path / "ws"
    (root / "mnt").mkdir(parents=True)
    (root / "sub").mkdir()
    (root / "sub" / ".env").write_text("API_TOKEN=on-the-root-s-disk-1\n")
    script = _MOUNTED.format(repo=str(Path.cwd()), root=str(root))
    setup = (
        f"mount -t tmpfs none {root}/mnt && echo API_TOKEN=on-another-mount-22 > {root}/mnt/.env"
    )
    done = in_own_mounts(setup, script)
    assert done.stdout.strip() == "['sub/.env:API_TOKEN']", done.stderr[-3000:]


def test_proc_sys_dev_are_not_walked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A root that is `/` never enters /proc, /sys, /dev (NEVER_WALKED; here a folder of
    the test stands for /proc)."""
    root = tmp_path / "ws"
    (root / "proc" / "1").mkdir(parents=True)
    (root / "proc" / "1" / ".env").write_text("API_TOKEN=under-proc-value-1\n")
    monkeypatch.setattr(file_walk, "NEVER_WALKED", frozenset({str(root / "proc")}))
    files = SecretFiles(Workspace([root]), CredentialNames(), background=lambda walk: walk())
    assert files.refresh() == ()
