"""What runs an MCP tools/call, with no SDK import at the top: tool_calls.py (the registry
and the call router, shared by the front's fast path and the SDK's handlers), router.py
(the editor's runtime when attached, else local.py's own), current.py (what the approver
is told about the call), progress_relay.py (a call's progress as ordered notifications),
elicit.py (approval forms by elicitation), input_required.py (forms on the
2026-07-28 revision), unreadable.py (answers toolhost cannot read fail at once) and
results.py (a toolhost CallResult as an MCP CallToolResult)."""
