"""Helpers shared by several tools: the edit matching ladder, brace balance, file receipts,
schema builders."""
