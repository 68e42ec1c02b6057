"""What changed in a workspace root since its last snapshot (checkpoints/command_snapshots.py).

- watcher.py: from inotify, or fanotify folder marks where inotify's share runs out
  (fs/inotify.py, fs/fanotify_folders.py); tree_walk.py: its walk, which places a watch on
  each folder before it lists it.
- fanotify_watch.py: the same from one fanotify filesystem mark (where the process may
  place one), for a root too large for inotify.
- root_watchers.py: each root's watcher, and which kind watches it.
- root_budget.py: how big a root is (measured before its first snapshot), and the share
  of the system's watches and marks the watchers may hold; links_apart.py: the files with
  hard links among a first walk's, found by a child process.
- changes.py: what a watcher hands over (`Changed`) and the windows of changes that a
  command or a glob opens on it.
"""
