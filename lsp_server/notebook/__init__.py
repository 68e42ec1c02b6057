"""Notebook editing that changes only the edited cell's bytes."""
