"""The search engine's fixtures (tests/search/conftest.py) for the grep tool's tests: the
ripgrep binary and the small tree both compare against."""

from tests.search.conftest import rg_path, tree

__all__ = ["rg_path", "tree"]
