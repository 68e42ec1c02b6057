"""Replace, insert or delete one notebook cell, changing only that cell's bytes.

Cells are created with nbformat (ids, required keys), the result is validated with
nbformat when the original was valid, and the text is spliced (layout.py) so that
metadata and the outputs of untouched cells stay byte-for-byte identical.
"""

from __future__ import annotations

import copy
import json
import re
import warnings
from typing import Any, Literal

import attrs
import nbformat
import nbformat.v4

from lsp_server.core.errors import (
    EDIT_INVALID,
    EDIT_NO_CHANGE,
    EDIT_NOT_FOUND,
    INVALID_ARGUMENT,
    ToolError,
)
from lsp_server.notebook.layout import NotebookFormatError, NotebookLayout, parse_layout

EditMode = Literal["replace", "insert", "delete"]
CellType = Literal["code", "markdown"]
_LINE = re.compile(r"[^\n]*\n|[^\n]+$")
_SHOWN_IDS = 12


@attrs.frozen
class CellEdit:
    mode: EditMode
    cell_number: int | None = None
    cell_id: str | None = None
    new_source: str | None = None
    cell_type: CellType | None = None


@attrs.frozen
class EditResult:
    text: str
    summary: str
    cell_count: int


def split_source_lines(source: str) -> list[str]:
    """Jupyter's on-disk form of a source: lines split on LF only, each keeping its LF."""
    return _LINE.findall(source)


def _source_text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _describe(index: int, cell: dict[str, Any]) -> str:
    cell_id = cell.get("id")
    id_part = f", id {cell_id}" if isinstance(cell_id, str) else ""
    return f"cell {index} ({cell.get('cell_type', '?')}{id_part})"


def _find_target(cells: list[dict[str, Any]], edit: CellEdit) -> int | None:
    """The index the edit refers to, or None (insert at the beginning)."""
    by_number = edit.cell_number
    if by_number is not None:
        limit = len(cells) if edit.mode == "insert" else len(cells) - 1
        if by_number > limit:
            raise ToolError(
                EDIT_NOT_FOUND,
                f"cell_number {by_number} is out of range: the notebook has {len(cells)} cell(s)",
                "cell numbers are 0-based; use 0.."
                + str(limit)
                + (" (insert accepts the cell count to append)" if edit.mode == "insert" else ""),
            )
    if edit.cell_id is None:
        if by_number is None and edit.mode != "insert":
            raise ToolError(
                INVALID_ARGUMENT,
                f"{edit.mode} needs cell_number or cell_id",
                "pass cell_number (0-based) or the cell's id",
            )
        return by_number
    for index, cell in enumerate(cells):
        if cell.get("id") == edit.cell_id:
            # With an id, insert goes after that cell (the reference contract's meaning).
            resolved = index + 1 if edit.mode == "insert" else index
            if by_number is not None and by_number != resolved:
                raise ToolError(
                    INVALID_ARGUMENT,
                    f"cell_id {edit.cell_id!r} is at position {index}, "
                    f"which does not agree with cell_number {by_number}",
                    "pass only one of cell_number and cell_id",
                )
            return resolved
    known = [c["id"] for c in cells if isinstance(c.get("id"), str)]
    shown = ", ".join(known[:_SHOWN_IDS]) + (" ..." if len(known) > _SHOWN_IDS else "")
    raise ToolError(
        EDIT_NOT_FOUND,
        f"no cell has id {edit.cell_id!r}",
        f"existing ids: {shown}" if known else "this notebook's cells have no ids: use cell_number",
    )


def _source_value(source: str, as_lines: bool) -> str | list[str]:
    return split_source_lines(source) if as_lines else source


def _replaced_cell(old: dict[str, Any], edit: CellEdit) -> dict[str, Any]:
    new_type = edit.cell_type or old.get("cell_type", "code")
    cell = copy.deepcopy(old)
    cell["cell_type"] = new_type
    cell["source"] = _source_value(edit.new_source or "", isinstance(old.get("source"), list))
    if new_type == "code":
        # The old outputs describe code that no longer exists.
        cell["outputs"] = []
        cell["execution_count"] = None
        cell.pop("attachments", None)
    else:
        cell.pop("outputs", None)
        cell.pop("execution_count", None)
    return cell


def _nbformat_cell(cell_type: CellType) -> dict[str, Any]:
    """A fresh cell as nbformat makes it (required keys, a random id)."""
    factory = nbformat.v4.new_code_cell if cell_type == "code" else nbformat.v4.new_markdown_cell
    return dict(factory(""))  # type: ignore[no-untyped-call]


def _new_cell(layout: NotebookLayout, edit: CellEdit) -> dict[str, Any]:
    cells: list[dict[str, Any]] = layout.document["cells"]
    cell_type = edit.cell_type or "code"
    created = _nbformat_cell(cell_type)
    minor = layout.document.get("nbformat_minor", 0)
    if isinstance(minor, int) and minor >= 5:
        taken = {c.get("id") for c in cells}
        while created.get("id") in taken:
            created = _nbformat_cell(cell_type)
    else:
        created.pop("id", None)  # ids exist from nbformat 4.5 on
    as_lines = sum(isinstance(c.get("source"), list) for c in cells) * 2 >= len(cells)
    created["source"] = _source_value(edit.new_source or "", as_lines)
    created["metadata"] = dict(created.get("metadata", {}))
    # Follow a neighbour of the same type for key order when the file is not key-sorted.
    model = next((c for c in cells if c.get("cell_type") == cell_type), None)
    if model is not None and not layout.style.sort_keys:
        order = {key: i for i, key in enumerate(model)}
        created = dict(sorted(created.items(), key=lambda kv: order.get(kv[0], len(order))))
    return created


def _joiner(layout: NotebookLayout) -> str:
    """What separates two cells in the file (`,` plus the newline and indentation)."""
    spans = layout.cell_spans
    if len(spans) >= 2:
        return layout.text[spans[0].end : spans[1].start]
    if layout.style.indent is None:
        return layout.style.item_separator
    return "," + layout.style.newline + layout.cell_indent()


def _splice_insert(layout: NotebookLayout, index: int, cell: dict[str, Any]) -> str:
    text, spans, style = layout.text, layout.cell_spans, layout.style
    dumped = style.dumps(cell, layout.cell_indent())
    if not spans:
        span = layout.cells_span
        if style.indent is None:
            body = "[" + dumped + "]"
        else:
            body = (
                "["
                + style.newline
                + layout.cell_indent()
                + dumped
                + style.newline
                + layout.cells_close_indent()
                + "]"
            )
        return text[: span.start] + body + text[span.end :]
    joiner = _joiner(layout)
    if index < len(spans):
        at = spans[index].start
        return text[:at] + dumped + joiner + text[at:]
    at = spans[-1].end
    return text[:at] + joiner + dumped + text[at:]


def _splice_delete(layout: NotebookLayout, index: int) -> str:
    text, spans = layout.text, layout.cell_spans
    if len(spans) == 1:
        span = layout.cells_span
        return text[: span.start] + "[]" + text[span.end :]
    if index == 0:
        return text[: spans[0].start] + text[spans[1].start :]
    return text[: spans[index - 1].end] + text[spans[index].end :]


def _is_valid(document: dict[str, Any]) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            node = nbformat.from_dict(copy.deepcopy(document))  # type: ignore[no-untyped-call]
            nbformat.validate(node)
        except nbformat.ValidationError:
            return False
    return True


def _parse(text: str) -> NotebookLayout:
    try:
        layout = parse_layout(text)
    except NotebookFormatError as exc:
        raise ToolError(
            EDIT_INVALID,
            f"the file is not a notebook this tool can edit: {exc}",
            "check that it is a Jupyter .ipynb file (JSON with a top-level 'cells' array)",
        ) from exc
    major = layout.document.get("nbformat")
    if major != 4:
        raise ToolError(
            EDIT_INVALID,
            f"nbformat {major} notebooks are not supported (only nbformat 4)",
            "convert it with `jupyter nbconvert --to notebook --nbformat 4` first",
        )
    cells = layout.document["cells"]
    if not all(isinstance(cell, dict) for cell in cells):
        raise ToolError(EDIT_INVALID, "a cell is not a JSON object", "repair the notebook first")
    return layout


def apply_cell_edit(text: str, edit: CellEdit) -> EditResult:
    """The notebook text after the edit; raises ToolError for any refusal."""
    layout = _parse(text)
    cells: list[dict[str, Any]] = layout.document["cells"]
    if edit.mode != "delete" and edit.new_source is None:
        raise ToolError(INVALID_ARGUMENT, f"{edit.mode} needs new_source", "pass new_source")
    target = _find_target(cells, edit)
    if edit.mode == "replace":
        assert target is not None
        old = cells[target]
        new = _replaced_cell(old, edit)
        if new == old:
            raise ToolError(
                EDIT_NO_CHANGE,
                f"{_describe(target, old)} already has this source and type",
                "nothing to do",
            )
        span = layout.cell_spans[target]
        dumped = layout.style.dumps(new, layout.cell_indent())
        result = layout.text[: span.start] + dumped + layout.text[span.end :]
        had_outputs = new.get("cell_type") == "code" and old.get("outputs")
        cleared = " (outputs cleared)" if had_outputs else ""
        summary = f"replaced {_describe(target, new)}{cleared}"
        count = len(cells)
    elif edit.mode == "insert":
        index = target or 0
        new = _new_cell(layout, edit)
        result = _splice_insert(layout, index, new)
        summary = f"inserted {_describe(index, new)}"
        count = len(cells) + 1
    else:
        assert target is not None
        result = _splice_delete(layout, target)
        summary = f"deleted {_describe(target, cells[target])}"
        count = len(cells) - 1
    _check_result(layout, result)
    return EditResult(text=result, summary=summary, cell_count=count)


def _check_result(layout: NotebookLayout, result: str) -> None:
    """Our splice must produce valid JSON, and a valid notebook when the original was one."""
    try:
        document = json.loads(result)
    except json.JSONDecodeError as exc:  # a bug in the splice, never the model's fault
        raise RuntimeError(f"notebook splice produced invalid JSON: {exc}") from exc
    if _is_valid(layout.document) and not _is_valid(document):
        raise ToolError(
            EDIT_INVALID,
            "the edited notebook would not pass nbformat validation",
            "check cell_type and new_source",
        )


def source_of(text: str, index: int) -> str:
    """A cell's source as one string (tests and result receipts)."""
    return _source_text(json.loads(text)["cells"][index].get("source", ""))
