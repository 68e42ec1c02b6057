"""The ground floor: what every layer may import, and which imports nothing of toolhost.

- errors.py: the error vocabulary (ToolError and its stable codes);
- uris.py: the one path <-> URI helper;
- contract.py: tool contract entries, the registry, canonical JSON and fingerprints;
- client.py: the editor as the runtime sees it (capabilities, requests, unreadable answers);
- tool_output.py: what a tool hands back (its text, the files it changed, its write plan);
- diffs.py: unified diffs for approvals and edit receipts.
"""
