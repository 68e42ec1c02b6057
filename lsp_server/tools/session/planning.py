"""todo_write and the goal tools: session state the agent keeps for itself.

They change only the session's own state (never the workspace), so they are read-only
for policy and in every label, MCP's readOnlyHint included, like the reference contract's
todo tool; Hints.changes_state keeps a repeat from being called idempotent.
"""

from __future__ import annotations

from typing import Any

from lsp_server.core.contract import JSON_SCHEMA_DIALECT, ContractEntry, Hints, Tool
from lsp_server.core.tool_output import ToolOutput
from lsp_server.runtime.context import ToolContext
from lsp_server.runtime.sessions.session_state import TODO_STATUSES, GoalTracker, Todo, TodoList

MAX_TODOS = 100

TODO_WRITE = ContractEntry(
    name="todo_write",
    hints=Hints(changes_state=True, idempotent=True),  # replaces the list
    read_only=True,
    kind="state",
    description=(
        "Replace this session's todo list with `todos` (the whole list every time; an empty "
        "list clears it). Use it to plan multi-step work and keep one item in_progress at a "
        "time. Returns the list with counts; duplicate items are refused."
    ),
    schema={
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "additionalProperties": False,
        "required": ["todos"],
        "properties": {
            "todos": {
                "type": "array",
                "maxItems": MAX_TODOS,
                "description": "The complete new list, in order.",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["content", "status"],
                    "properties": {
                        "content": {
                            "type": "string",
                            "minLength": 1,
                            "description": "What to do, as a short imperative sentence.",
                        },
                        "status": {
                            "enum": list(TODO_STATUSES),
                            "description": "pending, in_progress or completed.",
                        },
                    },
                },
            }
        },
    },
)

CREATE_GOAL = ContractEntry(
    name="create_goal",
    # A repeat is refused while the goal is unfinished; a finished goal is replaced.
    hints=Hints(changes_state=True),
    read_only=True,
    kind="state",
    description=(
        "Set this session's one long-running objective (shown to the user in the editor). "
        "Refused while an unfinished goal exists: complete it or edit it with update_goal. "
        "Returns the goal's id and revision (1)."
    ),
    schema={
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "additionalProperties": False,
        "required": ["objective"],
        "properties": {
            "objective": {
                "type": "string",
                "minLength": 1,
                "description": "What the goal is, stated so that its completion can be checked.",
            },
            "max_rounds": {
                "type": "integer",
                "minimum": 1,
                "description": "Budget of work rounds you set yourself for the goal.",
            },
        },
    },
)

GET_GOAL = ContractEntry(
    name="get_goal",
    read_only=True,
    kind="state",
    description="Show this session's goal: id, revision, status, objective, blocked reason.",
    schema={
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "additionalProperties": False,
        "properties": {},
    },
)

UPDATE_GOAL = ContractEntry(
    name="update_goal",
    hints=Hints(changes_state=True),  # a repeat's revision is stale
    read_only=True,
    kind="state",
    description=(
        "Change the session's goal. Pass its goal_id and its current revision exactly (a "
        "stale revision is refused; call get_goal). action: edit (with objective and/or "
        "max_rounds), pause, resume, complete, or blocked (blocked_reason required)."
    ),
    schema={
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "additionalProperties": False,
        "required": ["goal_id", "revision", "action"],
        "properties": {
            "goal_id": {"type": "string", "description": "The goal's id from create_goal."},
            "revision": {
                "type": "integer",
                "minimum": 1,
                "description": "The goal's current revision (each update adds one).",
            },
            "action": {
                "enum": ["edit", "pause", "resume", "complete", "blocked"],
                "description": "What to change.",
            },
            "objective": {"type": "string", "description": "New objective (action=edit)."},
            "max_rounds": {
                "type": "integer",
                "minimum": 1,
                "description": "New round budget (action=edit).",
            },
            "blocked_reason": {
                "type": "string",
                "description": "What blocks the goal and what would unblock it (action=blocked).",
            },
        },
    },
)


async def run_todo_write(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    todos = ctx.session.extension(TodoList)
    todos.replace([Todo(item["content"], item["status"]) for item in args["todos"]])
    return ToolOutput(todos.render())


async def run_create_goal(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    goal = ctx.session.extension(GoalTracker).create(args["objective"], args.get("max_rounds"))
    return ToolOutput("created " + goal.render())


async def run_get_goal(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    goal = ctx.session.extension(GoalTracker).goal
    if goal is None:
        return ToolOutput("no goal in this session (create one with create_goal)")
    return ToolOutput(goal.render())


async def run_update_goal(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    goal = ctx.session.extension(GoalTracker).update(
        args["goal_id"],
        args["revision"],
        args["action"],
        objective=args.get("objective"),
        max_rounds=args.get("max_rounds"),
        blocked_reason=args.get("blocked_reason"),
    )
    return ToolOutput("updated " + goal.render())


TOOLS = (
    Tool(TODO_WRITE, run_todo_write),
    Tool(CREATE_GOAL, run_create_goal),
    Tool(GET_GOAL, run_get_goal),
    Tool(UPDATE_GOAL, run_update_goal),
)
