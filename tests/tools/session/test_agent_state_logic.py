"""Session state rules: todos without duplicates, goals with exact revisions and reasons."""

from __future__ import annotations

import pytest

from lsp_server.core.errors import (
    GOAL_CONFLICT,
    GOAL_EXISTS,
    GOAL_NOT_FOUND,
    INVALID_ARGUMENT,
    ToolError,
)
from lsp_server.runtime.sessions.session_state import GoalTracker, Todo, TodoList


def refused(code: str) -> pytest.RaisesExc[ToolError]:
    return pytest.raises(ToolError, check=lambda error: error.code == code)


def test_todo_list_replaces_counts_and_rejects_duplicates() -> None:
    todos = TodoList()
    todos.replace([Todo("write tests", "completed"), Todo("fix bug", "in_progress")])
    assert todos.counts() == {"pending": 0, "in_progress": 1, "completed": 1}
    assert todos.render() == (
        "Todo list (2 items: 0 pending, 1 in progress, 1 completed):\n[x] write tests\n[~] fix bug"
    )
    with refused(INVALID_ARGUMENT):
        todos.replace([Todo("a", "pending"), Todo("b", "pending"), Todo(" a ", "completed")])
    assert [item.content for item in todos.items] == ["write tests", "fix bug"]  # unchanged
    todos.replace([])
    assert todos.render() == "Todo list cleared (0 items)."
    assert todos.status()["todos"]["revision"] == 2


def test_goal_lifecycle_with_exact_revisions() -> None:
    goals = GoalTracker()
    goal = goals.create("ship 2.0", max_rounds=10)
    assert (goal.goal_id, goal.revision, goal.status) == ("goal-1", 1, "active")
    goals.update("goal-1", 1, "pause")
    with refused(GOAL_CONFLICT) as info:
        goals.update("goal-1", 1, "resume")
    assert "at revision 2" in info.value.cause
    with refused(GOAL_CONFLICT):
        goals.update("goal-1", 3, "resume")
    goals.update("goal-1", 2, "resume")
    goals.update("goal-1", 3, "edit", objective="ship 2.0 and 2.0.1", max_rounds=20)
    assert goals.goal is not None and goals.goal.objective == "ship 2.0 and 2.0.1"
    with refused(GOAL_NOT_FOUND):
        goals.update("goal-9", 4, "complete")
    goals.update("goal-1", 4, "complete")
    assert goals.status()["goal"]["status"] == "complete"
    with refused(INVALID_ARGUMENT):  # nothing follows complete
        goals.update("goal-1", 5, "resume")
    assert goals.create("next", None).goal_id == "goal-2"


def test_an_unfinished_goal_is_never_overwritten() -> None:
    goals = GoalTracker()
    goals.create("first", None)
    for action, reason in [("pause", None), ("blocked", "waiting for review")]:
        with refused(GOAL_EXISTS):
            goals.create("second", None)
        assert goals.goal is not None
        goals.update("goal-1", goals.goal.revision, action, blocked_reason=reason)  # type: ignore[arg-type]
    with refused(GOAL_EXISTS):
        goals.create("second", None)
    assert goals.goal is not None and goals.goal.objective == "first"


def test_blocked_needs_a_reason_and_resume_clears_it() -> None:
    goals = GoalTracker()
    goals.create("migrate db", None)
    for reason in [None, "", "   "]:
        with refused(INVALID_ARGUMENT) as info:
            goals.update("goal-1", 1, "blocked", blocked_reason=reason)
        assert "needs a reason" in info.value.cause
    assert goals.goal is not None and goals.goal.revision == 1  # refusals change nothing
    goals.update("goal-1", 1, "blocked", blocked_reason="no database credentials")
    assert goals.status()["goal"]["blockedReason"] == "no database credentials"
    with refused(INVALID_ARGUMENT):
        goals.update("goal-1", 2, "resume", blocked_reason="still blocked")
    goals.update("goal-1", 2, "resume")
    assert goals.status()["goal"] == {
        "goalId": "goal-1",
        "objective": "migrate db",
        "maxRounds": None,
        "status": "active",
        "revision": 3,
        "blockedReason": None,
    }


def test_edit_needs_a_change_and_status_actions_take_no_fields() -> None:
    goals = GoalTracker()
    goals.create("x", None)
    with refused(INVALID_ARGUMENT):
        goals.update("goal-1", 1, "edit")
    with refused(INVALID_ARGUMENT):
        goals.update("goal-1", 1, "pause", objective="y")
    with refused(INVALID_ARGUMENT):
        goals.create("   ", None)
