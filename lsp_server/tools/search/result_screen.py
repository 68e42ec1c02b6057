"""What grep leaves out of an engine's results: secret files, and hard links read_file
would refuse. Each result file is looked at once, as the engine finds it (`visit`, told
by the engine while rg still runs), so the checks overlap the search instead of adding
to its tail; what `visit` did not see (the Python engine, rg's JSON) is looked at after.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Self

import anyio

from lsp_server.fs import hardlinks
from lsp_server.runtime.context import ToolContext

if TYPE_CHECKING:
    from lsp_server.search.engines import SearchEngines
    from lsp_server.search.query import SearchOutcome


def secret_test(ctx: ToolContext, engines: SearchEngines, base: Path) -> Callable[[str], bool]:
    """Whether a result path (relative to `base`) is a secret: `Workspace.is_secret`'s rule
    (its pattern list against the root-relative path and against the name), with the
    list compiled once into one regex by the engines (is_secret costs ~0.3 ms a path,
    this ~2 us). With allowed secrets configured, or outside the roots, is_secret itself
    decides."""
    root = ctx.workspace.root_of(base)
    if root is None or ctx.config.workspace.allowed_secrets:
        return lambda rel: ctx.workspace.is_secret(base / rel)
    match = engines.matcher_for(tuple(ctx.workspace.secret_patterns))
    prefix = "" if base == root else base.relative_to(root).as_posix() + "/"
    return lambda rel: match(prefix + rel) or match(rel.rsplit("/", 1)[-1])


class ResultScreen:
    """The secret test and the hard-link lstat of each result path (relative to `base`),
    made once per path, as the engine finds it. A context manager: it holds
    `base` open while the search runs, so that each lstat starts there instead of at /
    (a third cheaper in the standard library's folders)."""

    def __init__(self, ctx: ToolContext, base: Path, secret: Callable[[str], bool]) -> None:
        self.ctx = ctx
        self.base = base
        self._secret = secret
        self._seen: dict[str, tuple[bool, os.stat_result | None]] = {}
        self._folder: int | None = None

    def __enter__(self) -> Self:
        with contextlib.suppress(OSError):  # gone: the engine says so
            self._folder = os.open(self.base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._folder is not None:
            os.close(self._folder)
            self._folder = None

    def visit(self, path: str) -> tuple[bool, os.stat_result | None]:
        """(is a secret, the lstat of a regular file with more than one name, else None)."""
        seen = self._seen.get(path)
        if seen is None:
            linked = None
            try:
                where = path if self._folder is not None else self.base / path
                st = os.lstat(where, dir_fd=self._folder)
                if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
                    linked = st
            except OSError:
                pass
            seen = self._seen[path] = (self._secret(path), linked)
        return seen

    def is_secret(self, path: str) -> bool:
        return self.visit(path)[0]

    async def leave_out_links(self, outcome: SearchOutcome) -> None:
        """Drop the files read_file would refuse as hard links (a name for a file from
        outside the workspace, or another name of a secret), with one note saying how
        many. Finding their other names walks the tree: in a worker thread."""
        linked = []
        for hits in outcome.files:
            st = self.visit(hits.path)[1]
            if st is not None:
                linked.append((hits, self.base / hits.path, st))
        if not linked:
            return
        workspace = self.ctx.workspace
        root = workspace.root_of(self.base) or self.base
        names = await anyio.to_thread.run_sync(
            hardlinks.names_of_many, root, [st for _, _, st in linked]
        )
        refused = {
            id(hits)
            for hits, path, st in linked
            if hardlinks.link_refusal(
                workspace, path, st, None if names is None else names[(st.st_dev, st.st_ino)]
            )
            is not None
        }
        if refused:
            outcome.files = [hits for hits in outcome.files if id(hits) not in refused]
            outcome.notes.append(
                f"[{len(refused)} hard-linked file(s) left out: another name of a file "
                "outside the workspace or of a secret; read_file refuses them too]"
            )
