"""docs/ERRORS.md lists every error code the runtime defines."""

from __future__ import annotations

from pathlib import Path

from lsp_server.runtime import errors

ROOT = Path(__file__).resolve().parents[2]


def test_every_code_is_documented() -> None:
    doc = (ROOT / "docs" / "ERRORS.md").read_text()
    codes = [
        value for name, value in vars(errors).items() if name.isupper() and isinstance(value, str)
    ]
    assert codes
    missing = [code for code in codes if f"`{code}`" not in doc]
    assert not missing, f"document these codes in docs/ERRORS.md: {missing}"
