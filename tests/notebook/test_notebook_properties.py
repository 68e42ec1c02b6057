"""Property test of the notebook splice: any style, any edit -> only the edited cell's bytes."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_server.notebook.edit import CellEdit, apply_cell_edit, split_source_lines
from lsp_server.notebook.layout import parse_layout

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@st.composite
def notebooks(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    cells: list[dict[str, Any]] = []
    for index in range(draw(st.integers(0, 6))):
        source = draw(TEXT)
        as_lines = draw(st.booleans())
        body: Any = split_source_lines(source) if as_lines else source
        if draw(st.booleans()):
            cell: dict[str, Any] = {
                "cell_type": "code",
                "execution_count": draw(st.none() | st.integers(1, 99)),
                "id": f"c{index}",
                "metadata": {"tags": draw(st.lists(TEXT, max_size=2))},
                "outputs": [{"output_type": "stream", "name": "stdout", "text": [draw(TEXT)]}],
                "source": body,
            }
        else:
            cell = {"cell_type": "markdown", "id": f"c{index}", "metadata": {}, "source": body}
        cells.append(cell)
    document = {
        "cells": cells,
        "metadata": {"kernelspec": {"name": "python3", "display_name": draw(TEXT)}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    indent = draw(st.sampled_from([None, 1, 2, 4, "\t"]))
    text = json.dumps(
        document,
        indent=indent,
        sort_keys=draw(st.booleans()),
        ensure_ascii=draw(st.booleans()),
    )
    return text + draw(st.sampled_from(["", "\n"])), document


def common_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(notebooks(), st.data())
def test_any_edit_changes_only_its_cell(notebook: tuple[str, dict[str, Any]], data: Any) -> None:
    text, document = notebook
    cells = document["cells"]
    modes = ["insert"] + (["replace", "delete"] if cells else [])
    mode = data.draw(st.sampled_from(modes))
    limit = len(cells) if mode == "insert" else len(cells) - 1
    index = data.draw(st.integers(0, limit))
    source = data.draw(TEXT)
    edit = CellEdit(mode, cell_number=index, new_source=None if mode == "delete" else source)
    if mode == "replace":
        old = cells[index]
        expected_source = split_source_lines(source) if isinstance(old["source"], list) else source
        if (
            expected_source == old["source"]
            and not old.get("outputs")
            and (old.get("execution_count") is None)
        ):
            return  # an edit that changes nothing is refused (tested elsewhere)
    after = apply_cell_edit(text, edit).text
    result = json.loads(after)
    others_before = [c for i, c in enumerate(cells) if not (mode != "insert" and i == index)]
    others_after = [
        c for i, c in enumerate(result["cells"]) if not (mode != "delete" and i == index)
    ]
    assert others_after == others_before
    assert {k: v for k, v in result.items() if k != "cells"} == {
        k: v for k, v in document.items() if k != "cells"
    }
    # Byte level: the text outside the edited cell (and its separator) is untouched.
    layout = parse_layout(text)
    spans = layout.cell_spans
    prefix = common_prefix(text, after)
    suffix = common_prefix(text[::-1], after[::-1])
    if mode == "delete":
        start = spans[index - 1].end if index > 0 else spans[index].start
        end = spans[index + 1].start if index + 1 < len(spans) else spans[index].end
        if len(spans) == 1:
            start, end = layout.cells_span.start, layout.cells_span.end
        assert prefix >= start and len(text) - suffix <= end
    elif mode == "replace":
        assert prefix >= spans[index].start and len(text) - suffix <= spans[index].end
    else:
        restored = apply_cell_edit(after, CellEdit("delete", cell_number=index)).text
        assert restored == text
