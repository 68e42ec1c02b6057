"""On the ground floor: what every engine that starts a process shares.

- children.py: the parent-death signal a child gets (nothing outlives the server) and the
  name of the file that lists what a command left running; whether a process id is alive.
"""
