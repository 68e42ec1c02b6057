"""The ACP face (`toolhost acp -- <agent...>`): a proxy between an ACP editor and an ACP
agent that serves the agent's files, terminals and permission requests through the runtime
(docs/ACP.md).

main        stdio, signals, the proxy's life
proxy       the router: what passes through, what toolhost answers, a dying agent
ndjson      ACP's transport: one JSON-RPC message per line, bad lines reported one by one
peers       one side (editor or agent): ordered writes, toolhost's own requests
rewrites    initialize's capabilities, toolhost's MCP server in session/new
workspaces  one runtime per root (compose.open_runtime), ACP session -> runtime
calls       Runtime.call in the ACP session, refusals as Refused, full texts
files       fs/read_text_file (tools/files/read_window) and fs/write_text_file
terminals   terminal/* on background jobs
permission  policy's questions as session/request_permission with the diff
buffers     the editor's own fs/* as the document source (its unsaved buffers)
replies     refusals as JSON-RPC errors `<CODE>: <cause>; <recovery>`
"""
