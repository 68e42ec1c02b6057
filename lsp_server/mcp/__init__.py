"""toolhost over the Model Context Protocol (docs/MCP.md), one room per transport over what
both share.

The transports:
- stdio/: `toolhost mcp`, a front of the standard library only that answers the opening and
  plain tools/calls itself and hands the rest to the SDK once loaded;
- http/: `toolhost mcp --http`, the SDK's Streamable HTTP transport behind toolhost's gate.

Shared by both:
- server.py: the SDK's low-level server (Backend: the listing and the calls; tools/call's
  handler);
- calls/: what runs a tools/call, without the SDK: the one call path, the registry and the
  router (the attached editor's runtime or a local one), approval forms, results;
- listing_cache.py: tools/list made from the registry, kept for the next start;
- server_info.py: the server's name, instructions and capabilities;
- sdk_json.py: messages as the SDK writes them (bytes the front writes itself);
- unreadable_requests.py: the answer to a request the SDK cannot read, at its own id.

The attach socket these faces use to run calls in an editor's runtime is lsp_server/attach.
"""
