"""toolhost over the Model Context Protocol: `toolhost mcp` (server.py, the only module that
imports the MCP SDK) and attaching to an editor's `toolhost serve` (discovery, wire,
listener, attach_client). See docs/MCP.md."""
