"""Settings: tree.py (one attrs tree with defaults and docstrings), layers.py (the managed,
client, workspace and user layers merged with a clear precedence), workspace_file.py (a
root's .toolhost.toml, trusted by its approved content), managed.py (the administrator's
locks, failing closed; rule_syntax.py checks its rules), trust.py and approval.py (what
this user approved, kept outside the workspace), overview.py (the layers as `toolhost
status` and `doctor` print them)."""
