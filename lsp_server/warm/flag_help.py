"""What `--warm` says in `toolhost mcp --help` and `toolhost serve --help`."""

WARM_HELP = (
    "hand this start to a warm toolhost process kept for this user and code version (started "
    "by the first such start, it exits after 15 idle minutes): the first call answers in "
    "milliseconds instead of waiting for the runtime's imports (docs/WARM.md)"
)
