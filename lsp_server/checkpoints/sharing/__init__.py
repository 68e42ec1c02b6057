"""A root several writers share: whose each change is.

- attribution.py: at a command's end, its own changes apart from other writers'; at a
  revert, which paths another writer may hold a change in.
- side_files.py: what every toolhost process on a root shares for that: the editors'
  saves and the commands under way.
"""
