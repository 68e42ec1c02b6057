"""The LSP face: `toolhost serve` for editors.

- server.py: ToolhostServer, the pygls server and its state; handlers.py: its thin handlers;
- editor.py: the EditorBridge (approvals, buffers, applyEdit, lspRequest to the editor);
- transport.py, framing.py, tcp.py: stdio and authenticated TCP; wire_errors.py: JSON-RPC
  errors of its own; typed_protocol.py: toolhost/* messages typed from the method table;
  inbound.py: what arrives, read into its type or refused in a client author's words;
- capability_cache.py: the initialize answer's toolhost capability; watch.py: file
  watchers and index progress; warm_up.py: the runtime's modules, loaded in a thread once
  the initialize answer is out; config_state.py: ConfigState, the layers the server
  applies, reloads and trusts, and what the editor was told of them; root_refusal.py: a
  root that is no workspace, refused.
"""
