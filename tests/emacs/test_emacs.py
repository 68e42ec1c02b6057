"""toolhost.el in real Emacs (batch) on eglot: connect, a call, approvals, edits of dirty
buffers with one prompt, and eglot declining an edit."""

from __future__ import annotations

import re

import pytest

from tests.emacs.conftest import REPO, Emacs

pytestmark = pytest.mark.real_client


def text(result: dict) -> str:
    return "\n".join(part["text"] for part in result["content"] if part["type"] == "text")


def test_connects_calls_and_shows_the_views(emacs: Emacs) -> None:
    out = emacs.run("basics")
    assert out["capabilities"]["toolhost"]["protocolVersion"] == 1
    assert out["read"]["isError"] is False
    assert "beta" in text(out["read"])
    assert "read_file" in out["tools"] and "edit_file" in out["tools"]
    status = out["status"]
    assert status.startswith("toolhost ") and str(emacs.workspace) in status.splitlines()[0]
    assert "Sessions" in status and "default" in status
    assert "(:" not in status and "#s(" not in status
    assert "read_file" in out["activity"] and "notes.txt" in out["activity"]
    assert out["actions"][0] == "Show the result"
    assert out["result"].startswith("# read_file emacs-")
    assert "gamma" in out["result"]


def test_edit_of_a_dirty_buffer_with_one_prompt_and_readable_approvals(emacs: Emacs) -> None:
    out = emacs.run("approvals")
    # The unsaved text was sent before the call (eglot would send it on an idle timer).
    assert "typed by the user" in text(out["read"])
    assert out["edit"]["isError"] is False, out["edit"]
    assert out["buffer"] == "typed by the user\nalpha\nBETA\ngamma\n"
    assert out["disk"] == "alpha\nbeta\ngamma\n"  # the user's text is unsaved: not saved
    assert out["confirmations"] == 0  # eglot did not ask a second time

    edit, bash, dismissed = out["prompts"]
    # The diff is on screen while the choice is made; the choices and keys never change.
    assert edit["window"] is True
    assert edit["lines"][0] == "toolhost asks: Edit notes.txt  [medium risk]"
    assert "-beta" in edit["lines"] and "+BETA" in edit["lines"]
    assert edit["keys"] == bash["keys"] == "osad"
    assert bash["window"] is True
    assert "    touch denied.txt" in bash["lines"]
    assert f"folder:     {emacs.workspace}" in bash["lines"]
    assert "timeout:    30 s, then the process group is stopped" in bash["lines"]
    assert "background: no" in bash["lines"] and "sandbox:    none" in bash["lines"]
    assert out["approval_window_after"] is False

    assert out["bash"]["error"]["code"] == "permission.user_denied"
    assert "no reason given" in out["bash"]["error"]["message"]
    assert dismissed["window"] is True
    assert out["dismissed"]["error"]["code"] == "permission.user_denied"
    assert "dismissed the approval prompt" in out["dismissed"]["error"]["message"]
    assert out["ran"] is False


def test_eglot_declining_an_edit_is_editor_refused(emacs: Emacs) -> None:
    out = emacs.run("refused")
    assert out["confirmations"] == 1
    error = out["edit"]["error"]
    assert error["code"] == "editor.refused", out["edit"]
    assert "User cancelled server edit" in error["message"]
    assert out["buffer"] == "alpha\nbeta\ngamma\n"
    assert out["disk"] == "alpha\nbeta\ngamma\n"
    assert out["after"]["isError"] is False


def test_a_change_longer_than_its_window_can_be_read_first(emacs: Emacs) -> None:
    out = emacs.run("long_change")
    first, second = out["prompts"]
    assert first["keys"] == "osadv"  # Deny stays fourth; reading comes after it
    assert out["focused"] == "*toolhost approval*"
    assert second["keys"] == "osadv"
    assert out["answer"] == {"decision": "allow_once"}


def test_revert_this_call_shows_what_will_change_then_reverts(emacs: Emacs) -> None:
    out = emacs.run("revert")
    assert out["made"]["isError"] is False, out["made"]
    [listed] = out["listed"]
    assert listed["tool"] == "write_file"
    assert "Revert this call" in out["actions"]
    assert f"Revert call {listed['callId']} (write_file)?" in out["shown"]
    assert "created  made.txt -> removed" in out["shown"]
    assert out["result"]["reverted"] == ["made.txt"] and out["result"]["conflicts"] == []
    assert out["exists"] is False
    assert f"Reverted 1 file(s) of call {listed['callId']}." in out["buffer"]


def test_every_command_is_in_the_commands_table_of_the_docs(emacs: Emacs) -> None:
    commands = emacs.run("commands")["commands"]
    assert "toolhost" in commands and "toolhost-call" in commands
    doc = (REPO / "docs" / "EMACS.md").read_text(encoding="utf-8")
    table = doc[doc.index("## Commands") : doc.index("## From Lisp")]
    documented = re.findall(r"^\| `M-x ([\w-]+)` \|", table, flags=re.MULTILINE)
    assert sorted(documented) == commands


def test_an_agents_changes_are_reviewed_and_reverted_alone(emacs: Emacs) -> None:
    out = emacs.run("agents")
    assert out["a1"]["isError"] is False and out["b1"]["isError"] is False
    assert [(a["session"], a["calls"]) for a in out["agents"]] == [("agent-b", 1), ("agent-a", 1)]
    assert "changed 1 file(s) in 1 call(s)" in out["review"]
    assert "+from A" in out["review"] and "by-b.txt" not in out["review"]
    assert "Revert all 1 call(s) of" in out["asked"] and "session agent-a" in out["asked"]
    assert out["result"]["conflicts"] == [] and out["result"]["reverted"] == ["by-a.txt"]
    assert out["by-a"] is False and out["by-b"] == "from B\n"
