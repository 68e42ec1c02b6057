"""Placeholders are never written back by accident: a write that would put a
`‹secret:NAME›` into a file that did not hold it is refused.

The model sees a secret as its placeholder (redaction.py). A read-modify-write of a file
that holds the value (config.py with a key in it, through write_file or fs/write_text_file)
would otherwise replace the real value with the placeholder and break the program silently.
Writing the real value back instead would hand the agent a way to move the secret where a
command can print it encoded, so the writer refuses and says how to go around the value.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsp_server.core import errors
from lsp_server.core.errors import ToolError
from lsp_server.core.tool_output import FileChange
from lsp_server.secrets.redaction import CLOSE, OPEN


def require_no_new_placeholder(changes: list[FileChange], relative: Callable[[Path], str]) -> None:
    """`relative` names a file for the message (the workspace's relative path)."""
    for change in changes:
        after = change.after
        if after is None and change.raw_after is not None:
            after = change.raw_after.decode("utf-8", "replace")
        if after is None or OPEN not in after:
            continue
        before = change.before.text if change.before is not None else ""
        if after.count(OPEN) > before.count(OPEN):
            raise ToolError(
                errors.SECRET_PLACEHOLDER,
                f"the new text of {relative(change.path)} holds {_first(after)}, which stands "
                "for a secret value hidden from you: writing it would replace the real value",
                "leave the line that holds the secret as it is: edit_file with an "
                "old_string/new_string that stop before it, or ask the user to change it",
            )


def _first(text: str) -> str:
    start = text.index(OPEN)
    end = text.find(CLOSE, start)
    return text[start : end + 1] if 0 < end - start < 200 else OPEN + "…" + CLOSE


def explain_not_found(exc: ToolError, arguments: dict[str, Any]) -> None:
    """An edit whose old text holds a placeholder cannot match: the file holds the value.
    Says so in the recovery of `edit.not_found` instead of the usual 'copy it exactly'."""
    if exc.code != errors.EDIT_NOT_FOUND:
        return
    texts = [arguments.get("old_string")]
    edits = arguments.get("edits")
    if isinstance(edits, list):
        texts += [e.get("old_string") for e in edits if isinstance(e, dict)]
    for text in texts:
        if isinstance(text, str) and OPEN in text:
            exc.recovery = (
                f"{_first(text)} in old_string stands for a secret value hidden from you; the "
                "file holds the value, not this text: make old_string stop before that line "
                "or start after it"
            )
            return
