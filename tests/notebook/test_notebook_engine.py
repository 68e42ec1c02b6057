"""notebook_edit's engine: only the edited cell's bytes change (diff tests on a real notebook)."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

import nbformat
import pytest

from lsp_server.core.errors import (
    EDIT_INVALID,
    EDIT_NO_CHANGE,
    EDIT_NOT_FOUND,
    INVALID_ARGUMENT,
    ToolError,
)
from lsp_server.notebook.edit import CellEdit, apply_cell_edit, source_of
from lsp_server.notebook.layout import parse_layout

FIXTURE = (
    Path(__file__).parent / "fixtures" / "sales_analysis.ipynb.json"
)  # .json: keeps ruff from linting its cells


def fixture_text() -> str:
    return FIXTURE.read_text(encoding="utf-8")


def restyled(indent: int | str | None, *, sort_keys: bool, ensure_ascii: bool = False) -> str:
    """The fixture as another tool would have written it."""
    document = json.loads(fixture_text())
    if not sort_keys:
        # VS Code / hand-written order: source first, id last.
        for cell in document["cells"]:
            order = ["source", "cell_type", "metadata", "outputs", "execution_count", "id"]
            reordered = {k: cell[k] for k in order if k in cell}
            reordered.update({k: v for k, v in cell.items() if k not in reordered})
            cell.clear()
            cell.update(reordered)
        document = {"metadata": document.pop("metadata"), **document}
    text = json.dumps(document, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii)
    return text + "\n"


def changed_line_numbers(before: str, after: str) -> set[int]:
    """0-based line numbers of `before` that the diff replaces or deletes (insert points too)."""
    matcher = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False)
    touched: set[int] = set()
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag != "equal":
            touched.update(range(i1, max(i2, i1 + 1)))
    return touched


def cell_line_range(text: str, index: int) -> range:
    span = parse_layout(text).cell_spans[index]
    first = text.count("\n", 0, span.start)
    last = text.count("\n", 0, span.end)
    return range(first, last + 1)


def assert_only_cell_changed(before: str, after: str, index: int) -> None:
    span = parse_layout(before).cell_spans[index]
    new_span = parse_layout(after).cell_spans[index]
    assert after[: new_span.start] == before[: span.start]
    assert after[new_span.end :] == before[span.end :]
    assert changed_line_numbers(before, after) <= set(cell_line_range(before, index))


STYLES: dict[str, str] = {
    "jupyter (indent 1, sorted)": fixture_text(),
    "indent 2, unsorted": restyled(2, sort_keys=False),
    "tabs, ascii escapes": restyled("\t", sort_keys=True, ensure_ascii=True),
    "indent 4, sorted": restyled(4, sort_keys=True),
}


@pytest.mark.parametrize("style", list(STYLES))
def test_replacing_one_code_cell_changes_only_that_cell(style: str) -> None:
    before = STYLES[style]
    edit = CellEdit("replace", cell_number=2, new_source="df = load()\ndf")
    result = apply_cell_edit(before, edit)
    assert_only_cell_changed(before, result.text, 2)
    cell = json.loads(result.text)["cells"][2]
    assert cell["outputs"] == []
    assert cell["execution_count"] is None
    assert cell["id"] == "load-data"
    assert cell["metadata"] == {"scrolled": True}
    assert cell["source"] == ["df = load()\n", "df"]
    assert "outputs cleared" in result.summary
    # The re-serialised cell looks like its neighbours: same key order and indentation.
    original_cell = json.loads(before)["cells"][2]
    assert list(cell) == list(original_cell)
    expected_cell_text = json.dumps(
        cell,
        indent=parse_layout(before).style.indent,
        sort_keys=parse_layout(before).style.sort_keys,
        ensure_ascii=parse_layout(before).style.ensure_ascii,
    )
    indent = parse_layout(before).cell_indent()
    layout = parse_layout(result.text)
    span = layout.cell_spans[2]
    assert result.text[span.start : span.end] == expected_cell_text.replace("\n", "\n" + indent)
    nbformat.validate(nbformat.reads(result.text, as_version=4))


def test_a_rewritten_whole_notebook_would_differ_but_ours_does_not() -> None:
    # Why we splice: nbformat's own writer would reformat a file written with indent 2.
    before = STYLES["indent 2, unsorted"]
    rewritten = nbformat.writes(nbformat.reads(before, as_version=4))
    assert len(changed_line_numbers(before, rewritten)) > 50
    result = apply_cell_edit(before, CellEdit("replace", cell_id="notes", new_source="## Notes"))
    assert_only_cell_changed(before, result.text, 5)


def test_replace_by_id_keeps_markdown_attachments_and_metadata() -> None:
    before = fixture_text()
    result = apply_cell_edit(before, CellEdit("replace", cell_id="intro-md", new_source="# Sales"))
    assert_only_cell_changed(before, result.text, 0)
    cell = json.loads(result.text)["cells"][0]
    assert cell == {
        "cell_type": "markdown",
        "id": "intro-md",
        "metadata": {"tags": ["title"]},
        "source": ["# Sales"],
    }


def test_changing_a_markdown_cell_to_code_adds_empty_outputs() -> None:
    before = fixture_text()
    result = apply_cell_edit(
        before, CellEdit("replace", cell_id="notes", new_source="x = 1", cell_type="code")
    )
    cell = json.loads(result.text)["cells"][5]
    assert cell["cell_type"] == "code"
    assert cell["outputs"] == [] and cell["execution_count"] is None
    assert "attachments" not in cell
    nbformat.validate(nbformat.reads(result.text, as_version=4))


@pytest.mark.parametrize("style", list(STYLES))
def test_insert_adds_one_cell_and_touches_nothing_else(style: str) -> None:
    before = STYLES[style]
    edit = CellEdit("insert", cell_number=3, new_source="# check\nassert len(df)", cell_type="code")
    result = apply_cell_edit(before, edit)
    after_doc = json.loads(result.text)
    before_doc = json.loads(before)
    assert len(after_doc["cells"]) == len(before_doc["cells"]) + 1
    new = after_doc["cells"][3]
    assert new["source"] == ["# check\n", "assert len(df)"]
    assert new["outputs"] == [] and new["execution_count"] is None
    assert isinstance(new["id"], str) and new["id"] not in {c["id"] for c in before_doc["cells"]}
    # Deleting the inserted cell again gives back the original bytes exactly.
    restored = apply_cell_edit(result.text, CellEdit("delete", cell_number=3))
    assert restored.text == before
    nbformat.validate(nbformat.reads(result.text, as_version=4))


def test_insert_by_id_goes_after_that_cell_and_appending_works() -> None:
    before = fixture_text()
    after_id = apply_cell_edit(
        before, CellEdit("insert", cell_id="plot", new_source="Text", cell_type="markdown")
    )
    assert json.loads(after_id.text)["cells"][4]["source"] == ["Text"]
    count = len(json.loads(before)["cells"])
    appended = apply_cell_edit(before, CellEdit("insert", cell_number=count, new_source="end"))
    cells = json.loads(appended.text)["cells"]
    assert cells[-1]["source"] == ["end"] and cells[-1]["cell_type"] == "code"
    assert appended.text.startswith(before[: parse_layout(before).cell_spans[-1].end])
    at_start = apply_cell_edit(before, CellEdit("insert", new_source="first"))
    assert source_of(at_start.text, 0) == "first"


@pytest.mark.parametrize("index", [0, 3, 7])
def test_delete_removes_exactly_one_cell(index: int) -> None:
    before = fixture_text()
    result = apply_cell_edit(before, CellEdit("delete", cell_number=index))
    before_cells = json.loads(before)["cells"]
    after_cells = json.loads(result.text)["cells"]
    assert after_cells == before_cells[:index] + before_cells[index + 1 :]
    assert len(changed_line_numbers(before, result.text)) <= len(cell_line_range(before, index)) + 1


def test_deleting_every_cell_then_inserting_into_the_empty_notebook() -> None:
    text = fixture_text()
    while json.loads(text)["cells"]:
        text = apply_cell_edit(text, CellEdit("delete", cell_number=0)).text
    assert '"cells": []' in text
    text = apply_cell_edit(text, CellEdit("insert", new_source="x", cell_type="code")).text
    assert json.loads(text)["cells"][0]["source"] == ["x"]
    assert text.startswith('{\n "cells": [\n  {\n   "cell_type": "code"')
    nbformat.validate(nbformat.reads(text, as_version=4))


def test_one_line_and_crlf_files_keep_their_style() -> None:
    document: dict[str, Any] = json.loads(fixture_text())
    compact = json.dumps(document)
    result = apply_cell_edit(compact, CellEdit("replace", cell_number=1, new_source="import os"))
    assert "\n" not in result.text
    assert result.text.startswith(compact[: parse_layout(compact).cell_spans[1].start])
    crlf = fixture_text().replace("\n", "\r\n")
    result = apply_cell_edit(crlf, CellEdit("insert", cell_number=1, new_source="a\nb"))
    assert "\n" not in result.text.replace("\r\n", "")
    assert json.loads(result.text)["cells"][1]["source"] == ["a\n", "b"]


def test_unchanged_replace_and_bad_targets_are_refused() -> None:
    before = fixture_text()
    with pytest.raises(ToolError) as info:
        same = CellEdit("replace", cell_id="notes", new_source=source_of(before, 5))
        apply_cell_edit(before, same)
    assert info.value.code == EDIT_NO_CHANGE
    with pytest.raises(ToolError) as info:
        apply_cell_edit(before, CellEdit("delete", cell_number=8))
    assert info.value.code == EDIT_NOT_FOUND and "8 cell(s)" in info.value.cause
    with pytest.raises(ToolError) as info:
        apply_cell_edit(before, CellEdit("delete", cell_id="nope"))
    assert info.value.code == EDIT_NOT_FOUND and "intro-md" in info.value.recovery
    with pytest.raises(ToolError) as info:
        apply_cell_edit(before, CellEdit("replace", cell_number=1))
    assert info.value.code == INVALID_ARGUMENT
    with pytest.raises(ToolError) as info:
        apply_cell_edit(before, CellEdit("delete"))
    assert info.value.code == INVALID_ARGUMENT
    with pytest.raises(ToolError) as info:
        apply_cell_edit(before, CellEdit("delete", cell_number=1, cell_id="plot"))
    assert info.value.code == INVALID_ARGUMENT


@pytest.mark.parametrize(
    "text",
    ["not json", "[]", '{"nbformat": 4}', '{"nbformat": 3, "nbformat_minor": 0, "cells": []}'],
)
def test_non_notebooks_are_refused(text: str) -> None:
    with pytest.raises(ToolError) as info:
        apply_cell_edit(text, CellEdit("insert", new_source="x"))
    assert info.value.code == EDIT_INVALID


def test_old_minor_versions_get_no_cell_ids() -> None:
    document = json.loads(fixture_text())
    document["nbformat_minor"] = 4
    for cell in document["cells"]:
        del cell["id"]
    text = json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    result = apply_cell_edit(text, CellEdit("insert", cell_number=0, new_source="x"))
    assert "id" not in json.loads(result.text)["cells"][0]
    nbformat.validate(nbformat.reads(result.text, as_version=4))
