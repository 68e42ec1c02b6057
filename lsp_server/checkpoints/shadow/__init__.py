"""The shadow repository: a git repository of toolhost's own in the state folder whose
index and objects hold a workspace root's snapshots (repository.py), git run on it and
never on the user's repository (isolated_git.py), the objects written in-process
(objects.py), the files over the size limit kept out with a pointer in their place
(large_files.py), what changed between two trees (tree_changes.py), the index brought up to
date for the paths that changed (changed_paths.py) and the ignored files recorded beside the
tracked ones (ignored.py), a first index seeded from the user's own repository, read
only (seed.py, with what that index holds read in-process: index_summary.py), and the
scans of a root no watcher speaks for (scans.py), by its folders' stamps where the last
scan took them (folder_stamps.py). It imports nothing else of checkpoints/: the
recorder, the journal and the revert sit above it."""
