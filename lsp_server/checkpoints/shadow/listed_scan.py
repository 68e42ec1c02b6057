"""The full scan of a root its watcher has just walked, from what that walk listed
(watching/changes.py's Listing), so that no folder is listed twice: `git add -A` and the
ignored files' listing (scans.py's full scan) each walk the whole root again: a home
folder's first snapshot listed every folder three times.

It gives the tree `git add -A` gives, from the names instead of a walk:
- the files the ignore rules match are asked of `git check-ignore` (which lists no folder),
  only those below a folder holding a `.gitignore` where no other rule applies;
- the others go to `git update-index --add` in the index's order (the files this process
  cannot read are left out, as `add -A --ignore-errors` leaves them), the tracked ones
  first brought up to date by `git add -u` when the index is not new;
- the nested repositories and the paths the events named since the walk began by
  `git add -A` of those names (git lists only the folders above them, or the new folder);
- the ignored files are the candidates of the ignored-files budget (ignored.py).
When it cannot stand for the walk (too many paths changed since, git could not tell what is
ignored, or refused a name: one made unreadable meanwhile), it gives None and the caller
scans the root.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Container, Iterable, Sequence

from lsp_server.checkpoints.shadow.ignored import (
    IgnoredFiles,
    ignored_among,
    ignored_candidates,
    ignored_files_among,
)
from lsp_server.checkpoints.shadow.isolated_git import ShadowError
from lsp_server.checkpoints.shadow.repository import ShadowRepo
from lsp_server.config.broad_roots import exclude_lines, regenerable_lines

MAX_CHANGED = 200
"""More paths changed since the walk than this: a scan (git matches each index entry with
every name it is given: scans.py's MAX_NAMED_PATHS)."""


def listed_scan(
    repo: ShadowRepo,
    ignored: IgnoredFiles,
    files: Sequence[str],
    unreadable: Container[str],
    nested: Collection[str],
    changed: Collection[str],
) -> str | None:
    """The root's tree from a walk's listing (blocking, under the repository's locks): its
    `files`, those this process cannot read, the `nested` repositories it found, the paths
    `changed` since it began. None: scan the root instead."""
    if len(changed) > MAX_CHANGED or any(p.rpartition("/")[2] == ".gitignore" for p in changed):
        return None  # (a rule made after its folder was listed: git's walk applies it)
    repo.stamps = None  # (kept for roots no watcher watches)
    ruled = _under_rules(repo, files, nested)
    matched = ignored_among(repo, ruled) if ruled else set()
    if matched is None:
        return None
    if repo.regenerable:  # the exclude file's rule, where no .gitignore can undo it
        regenerable, checked = frozenset(repo.regenerable), set(ruled)
        matched |= {f for f in files if f not in checked and _below(f, regenerable)}
        matched |= {n for n in nested if n not in checked and _below(n + "/", regenerable)}
    fresh = not repo.index.exists()
    repo.large.refresh()
    indexed: set[str] = set()
    if not fresh:  # what changed of the tracked files, and which are (add -A would)
        repo.add_tracked()
        raw = repo.git.run("ls-files", "-z")
        indexed = set(raw.decode("utf-8", "surrogateescape").split("\0"))
    plain = sorted(f for f in files if f not in matched and f not in unreadable)
    names = "".join(f"{name}\0" for name in plain).encode("utf-8", "surrogateescape")
    try:
        repo.git.run(
            "update-index", "--add", "--remove", "--replace", "-z", "--stdin",
            data=names, long=True,
        )  # fmt: skip
    except ShadowError:
        return None  # (nothing written: git writes the index at the end)
    made = [p for p in changed if os.path.lexists(repo.work_tree / p)]
    repo.add_paths(list(dict.fromkeys([*(n for n in nested if n not in matched), *made])))
    found = ignored_files_among(repo, ignored.skip, (f for f in files if f in matched))
    if made:
        found += ignored_candidates(repo, ignored.skip, made)
    ignored.record(found=[f for f in found if f not in indexed])
    return repo.write_snapshot()


def _under_rules(repo: ShadowRepo, files: Iterable[str], nested: Iterable[str]) -> list[str]:
    """The paths an ignore rule could match: all where the repository's exclude file holds
    rules of its own (the user's info/exclude), else those below a folder holding a
    `.gitignore` (toolhost's own folders, which the exclude file names, are not walked)."""
    paths = [*files, *nested]
    if _own_rules(repo):
        return paths
    holding = {f.rpartition("/")[0] for f in files if f.rpartition("/")[2] == ".gitignore"}
    if "" in holding:
        return paths
    covered: dict[str, bool] = {"": False}

    def covers(folder: str) -> bool:
        known = covered.get(folder)
        if known is None:
            known = covered[folder] = folder in holding or covers(folder.rpartition("/")[0])
        return known

    return [path for path in paths if covers(path.rpartition("/")[0])]


def _below(path: str, names: frozenset[str]) -> bool:
    """`path` lies in a folder of one of these names."""
    return any(part in names for part in path.split("/")[:-1])


def _own_rules(repo: ShadowRepo) -> bool:
    """The exclude file holds rules other than toolhost's (its folders, the regenerable)."""
    try:
        text = (repo.git_dir / "info" / "exclude").read_text("utf-8", "replace")
    except OSError:
        return False
    ours = set((exclude_lines(repo.kept_out) + regenerable_lines(repo.regenerable)).splitlines())
    return any(
        line.strip() and not line.startswith("#") and line not in ours for line in text.splitlines()
    )
