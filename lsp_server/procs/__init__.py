"""On the ground floor: what every engine that starts a process shares.

- children.py: the parent-death signal a child gets (nothing outlives the server) and the
  name of the file that lists what a command left running; whether a process id is alive.
- search_path.py: PATH without relative entries and folders inside the root, for the
  programs toolhost runs by name on its own behalf.
"""
