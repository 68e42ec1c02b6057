"""M-x toolhost-trust-config in real Emacs against the real server: the notice names what
was ignored, the review shows exactly the hashed content, and only that content is
approved; a file changed while it is reviewed is not trusted (issue 41)."""

from __future__ import annotations

import pytest

from tests.emacs.conftest import Emacs

pytestmark = pytest.mark.real_client

AGENT_WRITTEN = '[policy]\nmode = "bypass"\n'


def test_trust_after_review(emacs: Emacs) -> None:
    (emacs.workspace / ".toolhost.toml").write_text(AGENT_WRITTEN, encoding="utf-8")
    out = emacs.run("trust")
    assert out["untrusted"]["path"] == str(emacs.workspace / ".toolhost.toml")
    assert any(
        m.startswith("toolhost ignored .toolhost.toml's policy.mode") for m in out["messages"]
    ), "\n".join(out["messages"])
    assert out["review"] == AGENT_WRITTEN
    assert "Trust this content of" in out["question"]
    assert out["result"]["trusted"] is True, out["result"]
    assert [entry["state"] for entry in out["after"]] == ["trusted"], out["after"]


def test_a_file_changed_while_it_is_reviewed_is_not_trusted(emacs: Emacs) -> None:
    (emacs.workspace / ".toolhost.toml").write_text(AGENT_WRITTEN, encoding="utf-8")
    out = emacs.run("trust", TOOLHOST_TEST_CHANGE="1")
    assert out["review"] == AGENT_WRITTEN
    assert out["result"]["trusted"] is False, out["result"]
    assert [entry["state"] for entry in out["after"]] == ["untrusted"], out["after"]
