"""The shadow index brought up to date for the paths the watcher saw change (watching/watcher.py),
instead of `git add -A` over the whole root (blocking; repository.py calls it under its locks).

- Files the last snapshot holds as files and that are still files or symlinks:
  `git update-index --remove` (no pathspec walk: far cheaper for many paths).
- Paths gone (deleted, or made and removed again within the command): `git rm --cached -r
  --ignore-unmatch`.
- Everything else (new names, folders, files over the size limit, nested repositories):
  `git add -A -- <paths>`, which applies the ignore rules as a full snapshot does.
"""

from __future__ import annotations

import stat
from collections.abc import Iterable

from lsp_server.checkpoints.shadow.isolated_git import IsolatedGit
from lsp_server.checkpoints.shadow.tree_changes import TreeCache, absent, tracked_file


def _names(paths: Iterable[str]) -> bytes:
    return "".join(f"{path}\0" for path in paths).encode("utf-8", "surrogateescape")


def add(
    git: IsolatedGit, trees: TreeCache, paths: Iterable[str], last_tree: str, large: set[str]
) -> None:
    """Update the index for `paths` (relative; a folder stands for all below it), given
    the tree of the last snapshot (read from `trees`) and the files kept out as over the
    size limit."""
    present: list[str] = []
    gone: list[str] = []
    files: list[str] = []
    for path in sorted(paths):
        try:
            kind = stat.S_IFMT((git.work_tree / path).lstat().st_mode)
        except OSError:  # missing, or a folder on the way is a file now
            if not absent(trees, last_tree, path):  # (made and removed since: nothing)
                gone.append(path)
            continue
        if (
            kind in (stat.S_IFREG, stat.S_IFLNK)
            and path not in large
            and tracked_file(trees, last_tree, path)
        ):
            files.append(path)
        else:
            present.append(path)
    if files:
        git.run("update-index", "--remove", "-z", "--stdin", data=_names(files))
    if gone:
        git.run(
            "--literal-pathspecs", "rm", "-r", "-q", "--cached", "--ignore-unmatch",
            "--pathspec-from-file=-", "--pathspec-file-nul", data=_names(gone),
        )  # fmt: skip
    if present:
        git.run(
            "--literal-pathspecs", "add", "-A", "--ignore-errors",
            "--pathspec-from-file=-", "--pathspec-file-nul", data=_names(present), ok=(0, 1),
        )  # fmt: skip
