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
    assert venv + "/path/to/toolhost_runtime-VERSION-py3-none-any.whl" in message, message
    assert "toolhost-use-workspace-venv" in message, message
    # "toolhost" on PyPI is another project: the fix never names it bare.
    assert re.search(r"pip install toolhost\b(?!-VERSION)", message) is None, message


def test_a_workspace_venv_is_not_started_on_its_own(emacs: Emacs) -> None:
    """An agent that writes <project>/.venv/bin/toolhost gets no process started outside the
    sandbox at the next M-x toolhost (issue 41): the error says how to opt in."""
    marker = emacs.home / "venv-toolhost-ran"
    bin_dir = emacs.workspace / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "toolhost").write_text(f"#!/bin/sh\ntouch '{marker}'\n")
    (bin_dir / "toolhost").chmod(0o755)
    out = emacs.run("missing", PATH=path_without_toolhost())
    assert "started" not in out
    assert not marker.exists()
    assert "is not started on its own" in out["message"], out["message"]
    assert "toolhost-use-workspace-venv" in out["message"], out["message"]
