"""toolhost's own files on disk: where its state lives, folders and token files only the
user can read, small caches kept there.

- dirs.py: the state, config and runtime folders, resolved once per process;
- private_folder.py: a folder only this user can enter (attach and warm sockets);
- token_files.py: bearer tokens in files only their user can read;
- keyed_cache.py: a small JSON file of values under content-hash keys;
- replace_file.py: a file replaced whole, atomically (checkpoint records).
"""
