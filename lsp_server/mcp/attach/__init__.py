"""An MCP agent attached to the editor's runtime: attach_records.py (the 0600 discovery
records), wire.py (JSON-RPC lines on the socket), listener.py (the editor's side, in
`toolhost serve`) and attach_client.py (`toolhost mcp`'s side)."""
