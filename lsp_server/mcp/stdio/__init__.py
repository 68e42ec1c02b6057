"""`toolhost mcp` on stdio (the default transport).

- front.py: the entry (`main`): claims stdin and stdout, answers the opening request and
  plain tools/list itself while the runtime and the SDK load in threads, then serves the SDK;
  `--http` hands over to mcp/http;
- stdio_pipes.py: the client's stdin and stdout, read on the loop, written from a thread;
- handshake.py: a connection's opening (initialize, or 2026-07-28's server/discover) and
  plain tools/list, answered as the SDK answers them, with the standard library only;
- fast.py: a plain tools/call run by the front itself, with the SDK's bytes (its call goes
  the one call path, mcp/calls/call_path.py);
- loader.py: imports the SDK's side (stdio_streams.py) in a thread, once started;
- stdio_streams.py: the SDK's server on stdio: over the front's pipes, or the SDK's own
  transport for a file or a terminal.

Everything up to the SDK's import is the standard library only (tests/mcp/test_front.py).
"""
