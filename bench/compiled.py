"""Code is timed as users run it: compiled. A wheel's install compiles its modules, and a
checkout writes its `__pycache__` as it goes, unless PYTHONDONTWRITEBYTECODE is set (as it
is in some shells and CI images): then every start of a server from that checkout would
compile each module it imports whose cache is missing or stale (~11 ms of `toolhost
serve`'s start here for the modules of one session's edits, ~170 ms before the first call
for a baseline folder never compiled). So each bench compiles the code it starts first."""

from __future__ import annotations

import compileall
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def compile_code(*checkouts: Path | str | None) -> None:
    """Write the bytecode of `lsp_server` in this tree and in each other checkout given."""
    for checkout in (HERE, *checkouts):
        if checkout is not None:
            compileall.compile_dir(Path(checkout) / "lsp_server", quiet=1)
