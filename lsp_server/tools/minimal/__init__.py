"""The minimal surface (read, write, edit, grep, bash with few arguments): thin adapters over
the same implementations as the full tools."""
