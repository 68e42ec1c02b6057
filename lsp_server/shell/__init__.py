"""Shell commands that can never hang the agent: a process runner and background jobs.

`runner` runs one command to completion (timeout, cancellation, leftover processes),
`jobs` keeps background commands with per-session output cursors, `capture` bounds the
memory of their output and `processes` finds and signals what a command left behind.
"""
