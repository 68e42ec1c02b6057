"""`toolhost-server-warm' in real Emacs: the server toolhost.el finds is started as
`serve --warm`, and the process serving eglot's pipe is a child of the warm process."""

from __future__ import annotations

import pytest

from tests.emacs.conftest import Emacs
from tests.nvim.test_readable import install_workspace_venv, path_without_toolhost
from tests.warm.editor_servers import assert_served_by_a_warm_child, warm_process

pytestmark = pytest.mark.real_client


def test_warm_setting_runs_the_server_in_a_warm_child(emacs: Emacs) -> None:
    toolhost = install_workspace_venv(emacs.workspace)
    with warm_process(emacs.workspace) as warm_pid:
        out = emacs.run("warm", PATH=path_without_toolhost())
        assert out["command"] == [str(toolhost), "serve", "--warm"]
        assert out["read"]["isError"] is False, out["read"]
        assert_served_by_a_warm_child(out["seen"], warm_pid)
