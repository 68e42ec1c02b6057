"""What a shell command line is and what it touches, read without running it.

The line is parsed by lsp_server/shellparse/ (the bash parser, on the ground floor).

- wrappers.py, wrapper_table.py, inline_code.py: commands that run other commands (env, sudo,
  xargs, git -c ...), opaque words, command text hidden in options;
- options.py: option spellings and the options that make a program write or run code;
- option_shapes.py, read_programs.py, find_reads.py, git_reads.py: which command shapes
  only read;
- command_paths.py, hidden_reads.py: the places (paths) a command reads or writes;
- recursive_reads.py: programs that read whole folders;
- denied_names.py: a denied program's name handed to a program toolhost does not know;
- git_guard.py: git configuration that would run programs.
"""
