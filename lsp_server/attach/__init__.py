"""The attach socket: an agent's face (`toolhost mcp`, `toolhost acp`) using the runtime of
the editor's `toolhost serve` on the same folder, so its calls see the editor's buffers and
ask its approvals. A room of its own beside the faces that use it.

- attach_records.py: the 0600 discovery records that say where an editor's socket is;
- wire.py: JSON-RPC lines on the socket;
- listener.py: the editor's side, in `toolhost serve`;
- attach_client.py: the agent face's side.
"""
