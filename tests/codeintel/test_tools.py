"""code_index and delete_symbol through the real dispatch (in-process runtime)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lsp_server.codeintel.indexes import CodeIndexService
from lsp_server.runtime.dispatch import Runtime
from tests.codeintel.conftest import FIXTURES
from tests.helpers import call_tool, make_runtime, text_of


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURES, root / "src")
    return root


@pytest.fixture
def runtime(ws: Path) -> Runtime:
    return make_runtime(ws, long_lived=True)


def service_of(runtime: Runtime) -> CodeIndexService:
    return runtime.services.get(CodeIndexService)


async def test_outline_of_a_file(runtime: Runtime) -> None:
    result = await call_tool(runtime, "code_index", {"action": "outline", "path": "src/sample.rs"})
    assert not result.is_error, text_of(result)
    lines = text_of(result).splitlines()
    assert "src/sample.rs:35: method Square.new — pub fn new(side: f64) -> Self {" in lines
    assert "src/sample.rs:7: trait Shape — pub trait Shape {" in lines


async def test_outline_kind_filter_and_limit(runtime: Runtime) -> None:
    result = await call_tool(
        runtime, "code_index", {"action": "outline", "path": "src/sample.py", "kind": "def"}
    )
    assert [line.split(" — ")[0].split(": ")[1] for line in text_of(result).splitlines()] == [
        "function plain",
        "function decorated",
        "function Shape.Inner.deep.nested",
        "function 计算",
        "function fetch",
        "function square",
    ]
    limited = await call_tool(
        runtime, "code_index", {"action": "outline", "path": "src/sample.py", "limit": 2}
    )
    assert "limit 2" in text_of(limited).splitlines()[-1]


async def test_outline_of_a_folder_uses_the_index(runtime: Runtime) -> None:
    result = await call_tool(
        runtime, "code_index", {"action": "outline", "path": "src", "limit": 500}
    )
    text = text_of(result)
    assert "src/Sample.java:24: class Sample — public class Sample implements Shape {" in text
    assert "src/sample.sh:9: function greet — greet() {" in text


async def test_search_cold_then_warm(runtime: Runtime, ws: Path) -> None:
    cold = await call_tool(runtime, "code_index", {"action": "search", "query": "area"})
    assert not cold.is_error
    text = text_of(cold)
    assert "still being built" in text
    assert "src/sample.go:31: method Square.Area — func (s *Square) Area() float64 {" in text
    service = service_of(runtime)
    service.wait_for_build(ws)
    warm = await call_tool(
        runtime, "code_index", {"action": "search", "query": "Area", "kind": "method"}
    )
    lines = text_of(warm).splitlines()
    assert "still being built" not in text_of(warm)
    assert lines[0].startswith("src/Sample.cs:9: method Sample.IShape.Area")  # exact case
    assert all(": method " in line for line in lines)


async def test_search_in_a_folder_and_nothing_found(runtime: Runtime, ws: Path) -> None:
    (ws / "other").mkdir()
    (ws / "other" / "x.py").write_text("def area(): pass\n", encoding="utf-8")
    result = await call_tool(
        runtime, "code_index", {"action": "search", "query": "area", "path": "other"}
    )
    assert text_of(result).splitlines()[0] == "other/x.py:1: function area — def area(): pass"
    none = await call_tool(runtime, "code_index", {"action": "search", "query": "zzzqqq"})
    assert not none.is_error
    assert "no definition matches 'zzzqqq'" in text_of(none)


async def test_bad_arguments_are_refused(runtime: Runtime) -> None:
    no_query = await call_tool(runtime, "code_index", {"action": "search"})
    assert no_query.is_error and no_query.error and no_query.error.code == "invalid_argument"
    bad_kind = await call_tool(
        runtime, "code_index", {"action": "outline", "path": "src/sample.py", "kind": "widget"}
    )
    assert bad_kind.is_error and "unknown kind" in text_of(bad_kind)


async def test_delete_symbol_needs_a_read_first_then_writes(runtime: Runtime, ws: Path) -> None:
    args = {"path": "src/sample.py", "name": "decorated"}
    refused = await call_tool(runtime, "delete_symbol", args)
    assert refused.is_error and refused.error and refused.error.code == "FS_NOT_OBSERVED"
    await call_tool(runtime, "read_file", {"path": "src/sample.py"})
    done = await call_tool(runtime, "delete_symbol", args)
    assert not done.is_error, text_of(done)
    assert "deleted function decorated (lines 14-18" in text_of(done)
    assert "-@functools.cache" in text_of(done)
    text = (ws / "src" / "sample.py").read_text(encoding="utf-8")
    assert "decorated" not in text and "# Decorated and documented." not in text


async def test_delete_symbol_ambiguity_and_unknown_names(runtime: Runtime) -> None:
    await call_tool(runtime, "read_file", {"path": "src/Sample.java"})
    ambiguous = await call_tool(
        runtime, "delete_symbol", {"path": "src/Sample.java", "name": "area"}
    )
    assert ambiguous.is_error and ambiguous.error and ambiguous.error.code == "edit.not_unique"
    assert 'line 33: method Sample.area (parent="Sample")' in text_of(ambiguous)
    unknown = await call_tool(runtime, "delete_symbol", {"path": "src/Sample.java", "name": "aera"})
    assert unknown.error and unknown.error.code == "edit.not_found"
    assert "close names: area" in text_of(unknown)
    picked = await call_tool(
        runtime, "delete_symbol", {"path": "src/Sample.java", "name": "add", "line": 43}
    )
    assert not picked.is_error, text_of(picked)
    assert "public double add(double a, double b)" in text_of(picked)


async def test_own_writes_update_the_index(runtime: Runtime, ws: Path) -> None:
    service = service_of(runtime)
    index = service.index_for(ws)
    index.sweep_interval = 3600.0  # only the write signal may update it
    index.refresh()
    before = await call_tool(runtime, "code_index", {"action": "search", "query": "farewell"})
    assert "src/sample.sh:13: function farewell" in text_of(before)
    await call_tool(runtime, "read_file", {"path": "src/sample.sh"})
    await call_tool(runtime, "delete_symbol", {"path": "src/sample.sh", "name": "farewell"})
    after = await call_tool(runtime, "code_index", {"action": "search", "query": "farewell"})
    assert "no definition matches" in text_of(after)
    assert index.parse_count == len(list(FIXTURES.iterdir())) + 1


async def test_index_picks_up_bash_style_changes_by_stat_sweep(runtime: Runtime, ws: Path) -> None:
    service = service_of(runtime)
    index = service.index_for(ws)
    index.sweep_interval = 0.0
    index.refresh()
    (ws / "src" / "added.go").write_text("package p\n\nfunc Sweeped() {}\n", encoding="utf-8")
    result = await call_tool(runtime, "code_index", {"action": "search", "query": "Sweeped"})
    assert "src/added.go:3: function Sweeped" in text_of(result)


async def test_one_shot_runtimes_do_not_start_background_builds(ws: Path) -> None:
    runtime = make_runtime(ws)  # not long-lived: like `toolhost call`
    result = await call_tool(runtime, "code_index", {"action": "search", "query": "greet"})
    assert "src/sample.sh:9: function greet" in text_of(result)
    assert "no workspace index yet" in text_of(result)
    service = service_of(runtime)
    assert not service.background_builds
    assert not service.build_state(ws).running
    assert not service.index_for(ws).is_complete
