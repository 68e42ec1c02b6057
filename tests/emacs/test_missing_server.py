"""M-x toolhost in real Emacs (batch) where no toolhost can be found: the error says what
was looked at and how to install it."""

from __future__ import annotations

import re

import pytest

from tests.emacs.conftest import Emacs
from tests.nvim.test_readable import path_without_toolhost

pytestmark = pytest.mark.real_client


def test_a_missing_server_is_explained_with_an_install_that_works(emacs: Emacs) -> None:
    out = emacs.run("missing", PATH=path_without_toolhost())
    assert "started" not in out
    message = out["message"]
    assert message.startswith("toolhost was not found: install the toolhost command")
    venv = f"cd {emacs.workspace}/ && python3 -m venv .venv && .venv/bin/pip install "
    assert venv + "/path/to/toolhost-VERSION-py3-none-any.whl" in message, message
    # "toolhost" on PyPI is another project: the fix never names it bare.
    assert re.search(r"pip install toolhost\b(?!-VERSION)", message) is None, message
