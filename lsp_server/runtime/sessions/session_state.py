"""Per-session agent state: the todo list, the one long-running goal, presented files.

Each class is a session extension (`ctx.session.extension(Cls)`, created with no
arguments) and reports itself to `toolhost/status` through `status()`. All changes go
through methods that check their preconditions and raise ToolError, so the tools stay thin.
"""

from __future__ import annotations

import time
from typing import Any, Literal, get_args

import attrs

from lsp_server.core.errors import (
    GOAL_CONFLICT,
    GOAL_EXISTS,
    GOAL_NOT_FOUND,
    INVALID_ARGUMENT,
    ToolError,
)

TodoStatus = Literal["pending", "in_progress", "completed"]
TODO_STATUSES: tuple[TodoStatus, ...] = get_args(TodoStatus)
_TODO_MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}

GoalStatus = Literal["active", "paused", "blocked", "complete"]
GoalAction = Literal["edit", "pause", "resume", "complete", "blocked"]
# Which statuses each action may start from; the action's result status.
_TRANSITIONS: dict[GoalAction, tuple[frozenset[GoalStatus], GoalStatus | None]] = {
    "edit": (frozenset({"active", "paused", "blocked"}), None),
    "pause": (frozenset({"active"}), "paused"),
    "resume": (frozenset({"paused", "blocked"}), "active"),
    "complete": (frozenset({"active", "paused", "blocked"}), "complete"),
    "blocked": (frozenset({"active", "paused"}), "blocked"),
}


@attrs.frozen
class Todo:
    content: str
    status: TodoStatus


class TodoList:
    """The session's todo list; todo_write replaces it as a whole."""

    def __init__(self) -> None:
        self.items: list[Todo] = []
        self.revision = 0

    def replace(self, items: list[Todo]) -> None:
        seen: dict[str, int] = {}
        for index, item in enumerate(items):
            key = item.content.strip()
            if not key:
                raise ToolError(
                    INVALID_ARGUMENT, f"todo {index} has empty content", "give every todo a text"
                )
            if key in seen:
                raise ToolError(
                    INVALID_ARGUMENT,
                    f"todos {seen[key]} and {index} are the same: {key!r}",
                    "list each todo once (merge or reword the duplicates)",
                )
            seen[key] = index
        self.items = list(items)
        self.revision += 1

    def counts(self) -> dict[str, int]:
        return {
            status: sum(item.status == status for item in self.items) for status in TODO_STATUSES
        }

    def render(self) -> str:
        if not self.items:
            return "Todo list cleared (0 items)."
        counts = self.counts()
        summary = ", ".join(f"{counts[s]} {s.replace('_', ' ')}" for s in TODO_STATUSES)
        lines = [f"Todo list ({len(self.items)} items: {summary}):"]
        lines += [f"{_TODO_MARKS[item.status]} {item.content}" for item in self.items]
        return "\n".join(lines)

    def status(self) -> dict[str, Any]:
        return {
            "todos": {
                "items": [{"content": i.content, "status": i.status} for i in self.items],
                "counts": self.counts(),
                "revision": self.revision,
            }
        }


@attrs.define
class Goal:
    goal_id: str
    objective: str
    max_rounds: int | None
    status: GoalStatus = "active"
    revision: int = 1
    blocked_reason: str | None = None
    created_at: float = attrs.Factory(time.time)
    updated_at: float = attrs.Factory(time.time)

    def public(self) -> dict[str, Any]:
        return {
            "goalId": self.goal_id,
            "objective": self.objective,
            "maxRounds": self.max_rounds,
            "status": self.status,
            "revision": self.revision,
            "blockedReason": self.blocked_reason,
        }

    def render(self) -> str:
        lines = [
            f"goal {self.goal_id} (revision {self.revision}): {self.status}",
            f"objective: {self.objective}",
        ]
        if self.max_rounds is not None:
            lines.append(f"max_rounds: {self.max_rounds}")
        if self.blocked_reason:
            lines.append(f"blocked: {self.blocked_reason}")
        return "\n".join(lines)


class GoalTracker:
    """A session's one long-running objective, changed only with its exact revision."""

    def __init__(self) -> None:
        self.goal: Goal | None = None
        self._created = 0

    def create(self, objective: str, max_rounds: int | None) -> Goal:
        if not objective.strip():
            raise ToolError(INVALID_ARGUMENT, "the objective is empty", "say what the goal is")
        current = self.goal
        if current is not None and current.status != "complete":
            raise ToolError(
                GOAL_EXISTS,
                f"goal {current.goal_id} is still {current.status} (revision {current.revision})",
                "finish it first (update_goal action=complete) or change it with "
                "update_goal action=edit",
            )
        self._created += 1
        self.goal = Goal(
            goal_id=f"goal-{self._created}", objective=objective, max_rounds=max_rounds
        )
        return self.goal

    def require(self, goal_id: str, revision: int) -> Goal:
        goal = self.goal
        if goal is None or goal.goal_id != goal_id:
            current = f"the current goal is {goal.goal_id}" if goal else "there is no goal"
            raise ToolError(
                GOAL_NOT_FOUND,
                f"no goal {goal_id!r} ({current})",
                "call get_goal for the current id",
            )
        if revision != goal.revision:
            raise ToolError(
                GOAL_CONFLICT,
                f"revision {revision} of {goal_id} is not current: the goal is at revision "
                f"{goal.revision}",
                "call get_goal, check what changed, and retry with the current revision",
            )
        return goal

    def update(
        self,
        goal_id: str,
        revision: int,
        action: GoalAction,
        *,
        objective: str | None = None,
        max_rounds: int | None = None,
        blocked_reason: str | None = None,
    ) -> Goal:
        goal = self.require(goal_id, revision)
        allowed_from, result = _TRANSITIONS[action]
        if goal.status not in allowed_from:
            raise ToolError(
                INVALID_ARGUMENT,
                f"cannot {action} goal {goal_id}: it is {goal.status}",
                f"{action} applies to a goal that is " + " or ".join(sorted(allowed_from)),
            )
        if action == "edit":
            if objective is None and max_rounds is None:
                raise ToolError(
                    INVALID_ARGUMENT, "edit changes nothing", "pass objective and/or max_rounds"
                )
            if objective is not None and not objective.strip():
                raise ToolError(INVALID_ARGUMENT, "the objective is empty", "say what the goal is")
        elif objective is not None or max_rounds is not None:
            raise ToolError(
                INVALID_ARGUMENT,
                f"objective and max_rounds go with action=edit, not {action}",
                "edit first, then change the status in a second call",
            )
        if action == "blocked":
            if blocked_reason is None or not blocked_reason.strip():
                raise ToolError(
                    INVALID_ARGUMENT,
                    "a blocked goal needs a reason",
                    "pass blocked_reason saying what blocks it and what would unblock it",
                )
        elif blocked_reason is not None:
            raise ToolError(
                INVALID_ARGUMENT,
                f"blocked_reason goes with action=blocked, not {action}",
                "leave blocked_reason out",
            )
        if objective is not None:
            goal.objective = objective
        if max_rounds is not None:
            goal.max_rounds = max_rounds
        if result is not None:
            goal.status = result
            goal.blocked_reason = blocked_reason if result == "blocked" else None
        goal.revision += 1
        goal.updated_at = time.time()
        return goal

    def status(self) -> dict[str, Any]:
        return {"goal": self.goal.public() if self.goal is not None else None}


@attrs.frozen
class PresentedFile:
    path: str
    """Workspace-relative display path."""
    uri: str
    description: str | None


class PresentedFiles:
    """The deliverables the agent declared last (and how many declarations there were)."""

    def __init__(self) -> None:
        self.files: list[PresentedFile] = []
        self.declarations = 0

    def declare(self, files: list[PresentedFile]) -> None:
        self.files = list(files)
        self.declarations += 1

    def status(self) -> dict[str, Any]:
        return {
            "presented": {
                "files": [attrs.asdict(item) for item in self.files],
                "declarations": self.declarations,
            }
        }
