"""Secrets never reach the model: commands get the server's environment minus credentials
(names.py), and every known secret value a result still holds (from the server's
environment, the workspace's .env files and the secret files readers refuse: sources.py,
the files found by a walk that lists again only the folders that changed: file_walk.py)
is replaced by a named placeholder such as `‹secret:OPENAI_API_KEY›` (redaction.py) at the
dispatch's result boundary, in the audit log and in the ACP face's own answers."""
