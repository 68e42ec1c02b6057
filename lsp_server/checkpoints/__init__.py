"""Checkpoints: a shadow git repository per workspace root that records what calls change.

- shadow/: the shadow repository, git with its own GIT_DIR, index and config, the
  workspace as its work tree; snapshots (`git add -A`, so git's stat cache makes one cost
  what changed), tree diffs, objects written in-process, files over the size limit kept out
  (its own map in shadow/__init__.py).
- records.py: what each checkpoint changed, stored as JSON beside the shadow repository,
  and the bounds (age, size budget) that keep the state folder from growing
  (record_ages.py: the end times a trim reads, kept until their file changes).
- restore.py: how one recorded change is put back, or why it cannot be; revert_disk.py: a
  revert's reads and writes beneath the root, never through a link.
- file_states.py: a file's state on disk and the record of its change.
- watching/: what changed in a root since its last snapshot, so that a shell command's
  snapshots add only those paths (shadow/changed_paths.py); command_snapshots.py takes
  them and turns the two around a command into its checkpoint.
- first_snapshot.py: a root measured before its first snapshot (watching/root_budget.py:
  over the budget, no shell checkpoints), and that snapshot off the command's path where
  it may be long.
- recorder.py (and windows.py, shell_calls.py): the service the runtime calls around
  writers and commands.
- journal.py, write_queue.py: a writer's checkpoint journaled on the call's path, written
  into the shadow repository in background batches, replayed after a crash.
- sharing/: a root several writers share: a command's own changes apart from the others'
  (exactly where the kernel names each writer: procs/process_writes.py), and what a
  revert must leave to them.
"""
