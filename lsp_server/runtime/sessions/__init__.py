"""What a session holds, and the sessions kept between `toolhost call` invocations.

- session.py: a session (observations, stored results, working folder, tools' own state)
  and the store of sessions;
- observations.py: what each session has seen of each file; the per-file mutation locks;
- activity.py: who wrote what (every session's writes, shared by the processes on a root);
- edit_merge.py: an edit of a file changed since the read merges when its lines did not;
- stored_results.py: full texts of bounded results, paged back by ref;
- session_state.py: the agent's todo list, goal and presented files;
- session_files.py, session_bounds.py, session_names.py: CLI sessions on disk, their bounds,
  and ids turned into safe names.
"""
