"""`toolhost index`, its progress bar, and the parallel cold build."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from lsp_server.cli import main
from lsp_server.cli.index import ProgressBar
from lsp_server.codeintel import index as index_module
from lsp_server.codeintel.index import PARALLEL_MIN_FILES, SymbolIndex


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def make_tree(root: Path, count: int) -> None:
    for n in range(count):
        folder = root / f"pkg{n % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{n}.py").write_text(
            f"class Thing{n}:\n    def method{n}(self):\n        return {n}\n\n\n"
            f"def helper{n}():\n    return Thing{n}()\n",
            encoding="utf-8",
        )


def test_index_command_builds_then_refreshes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_tree(tmp_path / "ws", 12)
    assert main(["index", "--root", str(tmp_path / "ws")]) == 0
    first = capsys.readouterr().err
    assert "12 files (12 parsed" in first
    assert "36 symbols" in first
    assert main(["index", "--root", str(tmp_path / "ws")]) == 0
    assert "12 files (0 parsed" in capsys.readouterr().err


def test_index_command_takes_the_folder_as_its_argument(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`toolhost index FOLDER`, as `ctags -R FOLDER` is typed: the same as --root FOLDER
    (it was refused: "unrecognized arguments"); both at once must agree."""
    make_tree(tmp_path / "ws", 3)
    assert main(["index", str(tmp_path / "ws")]) == 0
    assert f"indexed {tmp_path / 'ws'}: 3 files (3 parsed" in capsys.readouterr().err
    assert main(["index", str(tmp_path / "ws"), "--root", str(tmp_path)]) == 2
    assert "name the folder once" in capsys.readouterr().err


def test_index_command_refuses_a_missing_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["index", "--root", str(tmp_path / "nope")]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_index_command_takes_a_pool_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_tree(tmp_path / "ws", PARALLEL_MIN_FILES + 5)
    assert main(["index", "--root", str(tmp_path / "ws"), "--jobs", "0"]) == 2
    assert "--jobs must be at least 1" in capsys.readouterr().err
    assert main(["index", "--root", str(tmp_path / "ws"), "--jobs", "1"]) == 0
    assert f"{PARALLEL_MIN_FILES + 5} parsed" in capsys.readouterr().err


def test_progress_bar_on_a_terminal() -> None:
    terminal = FakeTerminal()
    bar = ProgressBar(terminal)
    bar(0, 4)
    bar(4, 4)
    text = terminal.getvalue()
    assert text.startswith("\r[" + "." * 30 + "] 0/4 files")
    assert text.endswith("\r[" + "#" * 30 + "] 4/4 files\n")


def test_parallel_build_matches_the_inline_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    make_tree(root, PARALLEL_MIN_FILES + 10)
    seen: list[tuple[int, int]] = []
    parallel = SymbolIndex(root, tmp_path / "p.sqlite", workers=2)
    stats = parallel.refresh(lambda done, total: seen.append((done, total)))
    monkeypatch.setattr(index_module, "PARALLEL_MIN_FILES", 10 * PARALLEL_MIN_FILES)
    inline = SymbolIndex(root, tmp_path / "i.sqlite", workers=2)
    inline.refresh()
    assert stats.parsed == PARALLEL_MIN_FILES + 10
    assert seen[0] == (0, PARALLEL_MIN_FILES + 10)
    assert seen[-1] == (PARALLEL_MIN_FILES + 10, PARALLEL_MIN_FILES + 10)
    assert parallel.symbols_under("") == inline.symbols_under("")
    assert len(parallel.symbols_under("")) == 3 * (PARALLEL_MIN_FILES + 10)


def test_a_cancelled_build_is_not_complete(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, 120)
    index = SymbolIndex(root, tmp_path / "c.sqlite", workers=1)

    def cancel_after_first_batch(done: int, total: int) -> None:
        if done:
            index.cancel()

    stats = index.refresh(cancel_after_first_batch)
    assert 0 < stats.parsed < 120
    assert not index.is_complete
