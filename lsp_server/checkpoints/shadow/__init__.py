"""The shadow repository: a git repository of toolhost's own in the state folder whose
index and objects hold the workspace's snapshots (repository.py), the objects it stores
(objects.py), what changed between two trees (tree_changes.py, changed_paths.py) and the
ignored files recorded beside the tracked ones (ignored.py). It imports nothing else of
checkpoints/: the recorder, the journal and the revert sit above it."""
