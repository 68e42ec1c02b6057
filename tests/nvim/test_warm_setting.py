"""`setup({ warm = true })` in real Neovim: the server the plugin finds is started as
`serve --warm`, and the process serving Neovim's pipe is a child of the warm process."""

from __future__ import annotations

import pytest

from tests.nvim.conftest import Neovim
from tests.nvim.test_readable import install_workspace_venv, path_without_toolhost
from tests.warm.editor_servers import assert_served_by_a_warm_child, warm_process

pytestmark = pytest.mark.real_client


def test_warm_setup_runs_the_server_in_a_warm_child(neovim: Neovim) -> None:
    toolhost = install_workspace_venv(neovim.workspace)
    with warm_process(neovim.workspace) as warm_pid:
        out = neovim.run("setup_warm", PATH=path_without_toolhost()).out
        assert out["server"]["cmd"] == [str(toolhost), "serve", "--warm"]
        assert "hello from the fixture" in out["text"]
        assert_served_by_a_warm_child(out["seen"], warm_pid)
