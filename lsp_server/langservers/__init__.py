"""Real language servers as child processes, driven by toolhost as an LSP client.

Independent of the tool runtime (nothing here imports the server module): the tools in
lsp_server/tools/lsp_tools.py feed it text and paths and format its plain-JSON answers.

- jsonrpc.py     JSON-RPC over a child's stdio: framing, pending requests, stderr tail
- client.py      one running server: initialize, server->client requests, progress,
                 document sync, diagnostics
- table.py       the server table, one row per language family
- discovery.py   which command serves a language for a root (config, project, PATH, .tools)
- manager.py     lazy start per (root, language), readiness, crash restart, idle, shutdown
- positions.py   1-based line + symbol text <-> LSP positions in the negotiated encoding
- doctor.py      `toolhost doctor`: what would serve each language, and how to install it
"""
