"""Settings: tree.py (one attrs tree with defaults and docstrings), layers.py (user,
workspace and client layers merged with a clear precedence), trust.py (rules this user
approved with "always allow", kept outside the workspace)."""
