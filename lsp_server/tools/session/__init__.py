"""Session tools: the todo list and goal, present, and use_capability (the door to the tools
off the core surface; workspace_activity.py: its workspace:activity, who else works here)."""
