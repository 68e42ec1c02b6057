"""Review and trust of a workspace .toolhost.toml in real Neovim against the real server:
the notice names what was ignored, :Toolhost trust shows exactly the hashed content and
approves that content only; a file changed while it is reviewed is not trusted (issue 41)."""

from __future__ import annotations

import pytest

from tests.nvim.conftest import Neovim

pytestmark = pytest.mark.real_client

AGENT_WRITTEN = '[policy]\nmode = "bypass"\n'


def test_trust_after_review(neovim: Neovim) -> None:
    (neovim.workspace / ".toolhost.toml").write_text(AGENT_WRITTEN, encoding="utf-8")
    out = neovim.run("trust_config").out
    assert out["untrusted"]["path"] == str(neovim.workspace / ".toolhost.toml")
    assert any(item.startswith("policy.mode") for item in out["untrusted"]["ignored"]), out
    assert any("toolhost ignored .toolhost.toml's policy.mode" in n for n in out["notices"]), out
    assert [entry["state"] for entry in out["before"]] == ["untrusted"]
    assert out["review"] == AGENT_WRITTEN.splitlines()
    assert out["result"]["trusted"] is True, out["result"]
    assert [entry["state"] for entry in out["after"]] == ["trusted"], out["after"]


def test_a_file_changed_while_it_is_reviewed_is_not_trusted(neovim: Neovim) -> None:
    (neovim.workspace / ".toolhost.toml").write_text(AGENT_WRITTEN, encoding="utf-8")
    out = neovim.run("trust_config", TOOLHOST_TEST_CHANGE="1").out
    assert out["review"] == AGENT_WRITTEN.splitlines()
    assert out["result"]["trusted"] is False, out["result"]
    assert [entry["state"] for entry in out["after"]] == ["untrusted"], out["after"]
