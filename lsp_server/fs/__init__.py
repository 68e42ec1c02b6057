"""The disk, safely: every byte a tool reads or writes on disk goes through here.

- workspace.py: path resolution and confinement to the workspace roots, secrets refused;
- beneath.py: use a path without a check-then-use gap (descriptor-relative walks);
- diskwrite.py: publishing a change through open descriptors, the last version check at the
  rename;
- hardlinks.py: a file with several names is read only when every name is accounted for;
- textio.py: versions, decoding that round-trips, atomic writes keeping encoding and mode;
- leftover_temps.py: temp files of killed writes, named so they can be swept;
- inotify.py, fanotify_folders.py, fanotify.py: the kernel's word on what changed, by
  folder watches (inotify's, or fanotify marks for any user from a pool of their own) or
  for a whole filesystem with each writer's pid (privileged).
"""
