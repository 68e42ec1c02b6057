"""Helpers shared by several tools: the edit matching ladder, brace balance, file receipts,
schema builders, a command's password prompts sent to the user (secret_grant.py)."""
