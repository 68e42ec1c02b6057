"""The tools, one module per tool (or tight family), grouped by what they work on.

`lsp_server.tools.registry` lists every module by a real import; helpers shared by several
tools live in `_support/`.
"""
