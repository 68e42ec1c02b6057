"""Approvals as the runtime sees them (the policy package decides; see lsp_server/policy/).

- verdicts.py: the Approver seam dispatch calls, Verdicts, the approval request and preview;
- stale_diff.py: what changed since the session read a file, for the FS_STALE_VERSION refusal.

The unified diffs themselves are lsp_server/core/diffs.py.
"""
