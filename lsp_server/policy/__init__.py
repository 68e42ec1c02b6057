"""Policy: who may run which tool call, and how the user is asked.

Pure parts (rules, shell splitting, the read-only classifier, the decision engine,
configuration layering, trust, persistence, the audit log) live here; the runtime's
approval seam (lsp_server/runtime/approvals.py) drives them for every call.
"""
