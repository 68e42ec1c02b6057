"""toolhost over the Model Context Protocol (docs/MCP.md).

The faces, here:
- front.py: `toolhost mcp` on stdio, standard library only: answers initialize at once and
  tools/list from its cache or the registry (listing_cache.py), runs plain tools/calls
  itself on the warm runtime with the SDK's bytes (fast.py), and hands the rest to the SDK
  once loader.py has imported it; stdio_streams.py are the SDK's streams over the front's pipes;
- server.py: the SDK's low-level server (the only module that imports the SDK at the top);
- http_gate.py, http_serve.py: `toolhost mcp --http`, the SDK's Streamable HTTP transport
  behind toolhost's gate (loopback, Host and Origin, a bearer token).

The rooms below them:
- calls/: what runs a call, without the SDK: the registry and router (tool_calls.py,
  router.py: the editor's runtime or a local one, local.py), approval forms (elicit.py,
  rounds.py, unreadable.py, current.py), results.py (a CallResult as an MCP result);
- attach/: attaching to an editor's `toolhost serve`: discovery records, the socket's wire,
  the editor-side listener and the agent-side client.
"""
