"""Session tools: the todo list and goal, present, and use_capability (the door to the tools
off the core surface)."""
