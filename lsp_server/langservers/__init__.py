"""Real language servers as child processes, driven by toolhost as an LSP client.

Independent of the server module: the tools in lsp_server/tools/code/lsp_tools.py give it
paths and texts and format its plain-JSON answers (docs/LANGUAGE_SERVERS.md).

- jsonrpc.py     JSON-RPC over a child's stdio: framing, pending requests, stderr tail
- child.py       one running server: initialize, server->client requests, progress,
                 document sync, diagnostics
- operations.py  definition / references / hover / diagnostics with the readiness rules
- manager.py     lazy start per (root, server row), crash restart, idle stop, shutdown
- table.py       the server table, one row per server family
- discovery.py   which command serves a row for a root (config, project, PATH, .tools)
- positions.py   1-based line + symbol text <-> LSP positions in the negotiated encoding
- texts.py       file texts reused while their stat is unchanged
- capabilities.py what toolhost declares as the client of a server
- answer_log.py  who answered the lsp_* questions: the editor's servers or toolhost's
- diagnosis.py   `toolhost doctor`: what serves each language, and how to install it

compose.py installs the manager as a service and stops it at shutdown.
"""
