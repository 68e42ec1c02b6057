"""Search tools: grep (ripgrep), glob and ls.

- grep.py, result_screen.py: grep, and what it leaves out of an engine's results;
- glob_tool.py, glob_memory.py: glob, and the matches' mtimes it keeps while the root's
  checkpoint watcher can say what changed since;
- ls.py: ls.
"""
