"""Each agent's changes in real Neovim: :Toolhost agents, its review (d) and Revert all."""

from __future__ import annotations

import pytest

from tests.nvim.conftest import Neovim

pytestmark = pytest.mark.real_client


def test_an_agent_is_reviewed_and_reverted_without_touching_another(neovim: Neovim) -> None:
    out = neovim.run("agents").out
    assert [(e["session"], e["calls"], e["files"]) for e in out["listed"]] == [
        ("agent-a", 2, ["by-a.txt"]),
        ("agent-b", 1, ["by-b.txt"]),
    ]
    listing = "\n".join(out["listing"])
    assert "Neovim (session agent-a): 2 call(s), 1 file(s)" in listing
    assert "d on an agent: review its changes" in listing
    review = "\n".join(out["review"])
    assert "changed 1 file(s) in 2 call(s)" in review
    assert "+from A\n+more from A" in review and "by-b.txt" not in review
    assert "Revert all 2 call(s) of" in out["prompt"] and "session agent-a" in out["prompt"]
    assert out["outcome"]["calls"] and out["outcome"]["conflicts"] == [], out["outcome"]
    assert out["by_a"] is False  # A's file is gone again
    assert out["by_b"] == "from B\n"  # B's stays
