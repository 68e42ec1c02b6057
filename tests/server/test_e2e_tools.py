"""Every tool once over the wire: `toolhost serve` as a subprocess, driven by pytest-lsp
(the tools other e2e files do not reach: listing, images, symbols, language servers,
notebooks, the web, goals, and the success paths of multi_edit, delete_range, move_file)."""

from __future__ import annotations

import base64
import io
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.helpers import fixed_page, loopback_http, lsp_call, lsp_session, text_of
from tests.langservers.conftest import copy_fixture, require_server

BYPASS = {"policy": {"mode": "bypass"}}
NOTEBOOK = (
    Path(__file__).resolve().parents[1] / "notebook" / "fixtures" / "sales_analysis.ipynb.json"
)

pytestmark = pytest.mark.timeout(120)


def ok(result: dict[str, Any]) -> str:
    assert not result["isError"], text_of(result)
    return text_of(result)


async def test_listing_tools_glob_and_ls(workspace: Path) -> None:
    size = (workspace / "src" / "inventory.py").stat().st_size
    async with lsp_session(workspace, BYPASS) as client:
        found = ok(await lsp_call(client, "glob", {"pattern": "**/*.py"}))
        listed = ok(await lsp_call(client, "ls", {"path": "src"}))
        tree = ok(await lsp_call(client, "ls", {"recursive": True}))
    # glob lists newest first: compare as a set.
    assert sorted(found.splitlines()) == ["src/inventory.py", "tests/test_inventory.py"], found
    assert listed == f"inventory.py\t{size}"
    assert {"src/", f"src/inventory.py\t{size}", "tests/"} <= set(tree.splitlines()), tree


async def test_view_image_sends_the_image_over_the_wire(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    buffer = io.BytesIO()
    Image.new("RGB", (40, 20), (10, 200, 10)).save(buffer, format="PNG")
    (root / "shot.png").write_bytes(buffer.getvalue())
    async with lsp_session(root, BYPASS) as client:
        result = await lsp_call(client, "view_image", {"path": "shot.png"})
    assert ok(result) == "[image: image/png, 40x20] shot.png"
    [image] = [part for part in result["content"] if part["type"] == "image"]
    assert image["mimeType"] == "image/png"
    assert base64.b64decode(image["data"]) == buffer.getvalue()


RESTOCK = (
    "def restock(item: Item, amount: int) -> Item:",
    "    return Item(item.name, item.price, item.quantity + amount)",
)


async def test_file_writers_succeed_over_the_wire(workspace: Path) -> None:
    source = workspace / "src" / "inventory.py"
    before = source.read_text()
    edits = [
        {"old_string": "def total_value(items):", "new_string": "def total(items):"},
        {"old_string": "    quantity: int = 0", "new_string": "    quantity: int = 1"},
    ]
    async with lsp_session(workspace, BYPASS) as client:
        ok(await lsp_call(client, "read_file", {"path": "src/inventory.py"}))
        multi = ok(
            await lsp_call(client, "multi_edit", {"path": "src/inventory.py", "edits": edits})
        )
        ranged = ok(
            await lsp_call(
                client,
                "delete_range",
                {"path": "src/inventory.py", "start_anchor": RESTOCK[0], "end_anchor": RESTOCK[1]},
            )
        )
        moved = ok(
            await lsp_call(
                client,
                "move_file",
                {"source_path": "src/inventory.py", "destination_path": "src/stock.py"},
            )
        )
        symbol = ok(
            await lsp_call(client, "delete_symbol", {"path": "src/stock.py", "name": "total"})
        )
    assert multi.startswith("edited src/inventory.py (2 edits)\n--- a/src/inventory.py\n")
    assert ranged.startswith("deleted lines "), ranged
    assert moved == "moved src/inventory.py -> src/stock.py"
    assert symbol.startswith("deleted function total (lines 15-16,"), symbol
    assert not source.exists()
    # restock (the last function) went with its blank separator, total with its own.
    expected = before[: before.index("def total_value")].replace("int = 0", "int = 1")
    assert expected.endswith("quantity: int = 1\n\n\n")
    expected = expected[: -len("\n\n")]
    assert (workspace / "src" / "stock.py").read_text() == expected


async def test_notebook_edit_over_the_wire(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    shutil.copy(NOTEBOOK, root / "sales.ipynb")
    cells_before = json.loads((root / "sales.ipynb").read_text())["cells"]
    async with lsp_session(root, BYPASS) as client:
        ok(await lsp_call(client, "read_file", {"path": "sales.ipynb"}))
        edited = ok(
            await lsp_call(
                client,
                "notebook_edit",
                {"path": "sales.ipynb", "cell_number": 0, "new_source": "# Sales, revised"},
            )
        )
    assert edited == (
        "edited sales.ipynb: replaced cell 0 (markdown, id intro-md); the notebook now has "
        f"{len(cells_before)} cell(s)"
    )
    cells = json.loads((root / "sales.ipynb").read_text())["cells"]
    assert cells[0] == {**cells_before[0], "source": ["# Sales, revised"]}
    assert cells[1:] == cells_before[1:]


async def test_goals_over_the_wire(tmp_path: Path) -> None:
    async with lsp_session(tmp_path, BYPASS) as client:
        none = ok(await lsp_call(client, "get_goal", {}))
        created = ok(await lsp_call(client, "create_goal", {"objective": "ship 1.0"}))
        updated = ok(
            await lsp_call(
                client, "update_goal", {"goal_id": "goal-1", "revision": 1, "action": "complete"}
            )
        )
        shown = ok(await lsp_call(client, "get_goal", {}))
    assert none.startswith("no goal in this session")
    assert created == "created goal goal-1 (revision 1): active\nobjective: ship 1.0"
    assert updated == "updated goal goal-1 (revision 2): complete\nobjective: ship 1.0"
    assert shown == "goal goal-1 (revision 2): complete\nobjective: ship 1.0"


@pytest.fixture
def loopback_site() -> Iterator[str]:
    page = b"<html><body><h1>Release notes</h1><p>It works.</p></body></html>"
    with loopback_http(fixed_page(page, "text/html; charset=utf-8")) as url:
        yield url


async def test_web_fetch_over_the_wire(tmp_path: Path, loopback_site: str) -> None:
    options = {**BYPASS, "web": {"allowLoopback": True}}
    url = f"{loopback_site}/notes.html"
    async with lsp_session(tmp_path, options) as client:
        page = ok(await lsp_call(client, "web_fetch", {"url": url}))
    assert (
        page == f"GET {url} -> 200 OK\ncontent: text/html, 64 bytes\n\n# Release notes\n\nIt works."
    )


@pytest.mark.slow
async def test_language_server_tools_over_the_wire(tmp_path: Path) -> None:
    root = copy_fixture("python", tmp_path)
    require_server("python", root)
    where = {"path": "main.py", "line": 8, "symbol": "make_circle"}
    async with lsp_session(root, BYPASS) as client:
        references = ok(await lsp_call(client, "lsp_references", where))
        hover = ok(await lsp_call(client, "lsp_hover", where))
        diagnostics = ok(await lsp_call(client, "lsp_diagnostics", {"path": "bad_types.py"}))
    assert references.splitlines()[:3] == [
        "main.py:1: from shapes import Circle, area_of, make_circle",
        "main.py:8: small = make_circle(1.0)",
        "shapes.py:15: def make_circle(radius: float) -> Circle:",
    ]
    assert "def make_circle(radius: float) -> Circle" in hover and "Build a circle." in hover
    assert diagnostics.startswith("1 diagnostic(s) in bad_types.py:\n2:12 error [Pyright] ")
    assert "reportReturnType" in diagnostics
