"""Search tools: grep (ripgrep), glob and ls."""
