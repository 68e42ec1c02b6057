"""The secret-file walk and a root's first walk (the checkpoint watcher's) share their
listings (fs/shared_listings.py): in a home folder each folder of the top levels was
listed by both. Whichever walks first leaves what it listed; the other takes it only while
the folder is as it was, so a file made in between is still found by both."""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import pytest

from lsp_server.checkpoints.watching.root_budget import Tally
from lsp_server.checkpoints.watching.root_watchers import RootWatchers
from lsp_server.checkpoints.watching.watcher import TreeWatcher
from lsp_server.fs import shared_listings
from lsp_server.fs.shared_listings import SharedListings
from lsp_server.fs.workspace import Workspace
from lsp_server.secrets.names import CredentialNames
from lsp_server.secrets.sources import SecretFiles

AN_HOUR = 3600.0


@pytest.fixture
def listed(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times each folder was listed, by anyone in this process."""
    counts: Counter[str] = Counter()
    scandir = os.scandir

    def counted(path: str = ".") -> Iterator[os.DirEntry[str]]:
        counts[str(path)] += 1
        return scandir(path)

    monkeypatch.setattr(os, "scandir", counted)
    return counts


def home_like(tmp_path: Path) -> Path:
    """A home's top levels and below (secret files among them), every folder's mtime an
    hour old, as in a home that was not just written."""
    home = tmp_path / "home"
    files = {
        ".bashrc": "export PS1=x\n",
        ".ssh/config": "Host *\n",
        ".ssh/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----\nkey-of-the-user-1234\n",
        "projects/app/.env": "API_TOKEN=app-token-value-1234\n",
        "projects/app/src/pkg/mod.py": "x = 1\n",
        "projects/app/src/pkg/deep/deeper/deepest/y.py": "y = 2\n",
        "projects/app/node_modules/left-pad/index.js": "module.exports = 1\n",
        "projects/lib/README.md": "lib\n",
        ".config/tool/settings.json": "{}\n",
        ".cache/pip/http/a/b/c/blob": "cached\n",
    }
    for rel, text in files.items():
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    age_folders(home)
    return home


def age_folders(top: Path) -> None:
    old = time.time() - AN_HOUR
    for folder, _, _ in os.walk(top):
        os.utime(folder, (old, old))


def folders_of(home: Path) -> set[str]:
    """(listed here too: called before the walks are counted)"""
    return {folder for folder, _, _ in os.walk(home)}


def secret_walk(home: Path, listings: SharedListings | None) -> set[str]:
    """The secret files' values the secret walk finds, its background walk run at once."""
    walks: list[Callable[[], None]] = []
    workspace = Workspace([home])
    files = SecretFiles(workspace, CredentialNames(), background=walks.append, shared=listings)
    files.refresh()
    for walk in walks:
        walk()
    return {secret.value for secret in files.refresh()}


def root_walk(watcher: TreeWatcher) -> set[str]:
    """The files a watcher's first (counting) walk lists."""
    assert watcher.start(Tally(1 << 62, 1 << 62, float("inf")))
    listing = watcher._take_listing(set())
    assert listing is not None
    return set(listing.files)


@pytest.fixture
def watchers() -> Iterator[RootWatchers]:
    made = RootWatchers()
    yield made
    made.close()


@pytest.mark.parametrize("secret_walk_first", [False, True])
def test_the_two_walks_list_each_folder_once(
    tmp_path: Path, listed: Counter[str], watchers: RootWatchers, secret_walk_first: bool
) -> None:
    """Whichever walks first (the watcher's walk starts with the server; the secret walk
    with the first call, which may come while the watcher's walk runs), the other lists
    nothing again and finds what it found alone."""
    home = home_like(tmp_path)
    alone = secret_walk(home, None)
    assert "app-token-value-1234" in alone
    folders = folders_of(home)
    listed.clear()
    with watchers.listings.root_walk():  # (the watcher's walk has begun)
        if secret_walk_first:
            assert secret_walk(home, watchers.listings) == alone
        files = root_walk(watchers.of(home))
    if not secret_walk_first:
        assert secret_walk(home, watchers.listings) == alone
    assert "projects/app/node_modules/left-pad/index.js" in files
    assert "projects/app/src/pkg/deep/deeper/deepest/y.py" in files
    assert set(listed) == folders
    assert {folder: n for folder, n in listed.items() if n > 1} == {}


def test_a_folder_changed_since_the_other_walk_listed_it_is_listed_again(
    tmp_path: Path, listed: Counter[str], watchers: RootWatchers
) -> None:
    """A secret file made after the watcher listed its folder is found; a file made after
    the secret walk listed its folder is in the watcher's listing."""
    home = home_like(tmp_path)
    root_walk(watchers.of(home))
    (home / "projects" / "lib" / ".env").write_text("API_TOKEN=made-in-between-5678\n")
    listed.clear()
    assert "made-in-between-5678" in secret_walk(home, watchers.listings)
    assert listed[str(home / "projects" / "lib")] == 1  # (listed again; the others taken)
    assert listed[str(home / "projects")] == 0

    other = home_like(tmp_path / "second")
    with watchers.listings.root_walk():
        secret_walk(other, watchers.listings)
        (other / ".config" / "tool" / "made.json").write_text("{}")
        files = root_walk(watchers.of(other))
    assert ".config/tool/made.json" in files


def test_a_folder_changed_within_the_clock_margin_is_not_shared(
    tmp_path: Path, listed: Counter[str], watchers: RootWatchers
) -> None:
    """A folder whose mtime is younger than MARGIN_NS could change unseen by its stamp:
    each walk lists it."""
    home = home_like(tmp_path)
    os.utime(home / "projects", None)  # (now)
    listed.clear()
    root_walk(watchers.of(home))
    secret_walk(home, watchers.listings)
    assert listed[str(home / "projects")] == 2
    assert listed[str(home / ".ssh")] == 1


def test_a_listing_left_too_long_ago_is_not_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Listings wait for the other walk KEEP_SECONDS at most (the oldest go first), and no
    more than MAX_ENTRIES entries are held."""
    home = home_like(tmp_path)
    listings = SharedListings(4, frozenset())
    clock = [1000.0]
    monkeypatch.setattr(shared_listings.time, "monotonic", lambda: clock[0])
    with listings.root_walk():
        for folder in (home, home / "projects", home / ".ssh"):
            listings.entries(str(folder), leave=True)
            clock[0] += shared_listings.KEEP_SECONDS / 2
        listings.entries(str(home / ".config"), leave=True)  # (the first two expire)

        def stamp(folder: Path) -> Callable[[], shared_listings.Stamp | None]:
            return partial(shared_listings._stamp_now, str(folder))

        assert listings.take(str(home), stamp(home), by_root_walk=False) is None
        left = listings.take(str(home / ".ssh"), stamp(home / ".ssh"), by_root_walk=False)
        assert left is not None and {entry.name for entry in left} == {"config", "id_ed25519"}
        monkeypatch.setattr(shared_listings, "MAX_ENTRIES", 1)
        assert not listings.wanted_by_secret_walk(1, ".cache")  # (one entry is held)
