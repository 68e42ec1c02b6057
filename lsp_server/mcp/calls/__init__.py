"""What runs an MCP tools/call, with no SDK import at the top.

- call_path.py: the one path of a call, for both fronts (the stdio front's fast path and the
  SDK's handler): who made it, how its approval forms reach the user, its progress, the
  router's call, whether the tool exists;
- tool_calls.py: the registry and the router, made on first use or by the warm-up;
- router.py: which runtime serves the call: the attached editor's, else local.py's own;
- progress_relay.py: a call's progress as the ordered notifications of one request;
- elicit.py: approval forms by elicitation (the local runtime's asker: the form each call's
  caller brings, runtime/context.py Caller);
- input_required.py: forms on the 2026-07-28 revision, as `input_required` and the retry;
- unreadable.py: answers toolhost cannot read fail their request at once;
- results.py: a toolhost CallResult as an MCP CallToolResult; the unknown tool's error.
"""
