"""Shell tools: bash (foreground and background), job_output and job_kill, and how a call
is sandboxed."""
