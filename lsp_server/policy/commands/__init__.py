"""What a shell command line is and what it touches, read without running it.

- shell_words.py: the word splitter and the simple commands of a line;
- bash_tree.py: the tree-sitter-bash parse;
- wrappers.py: commands that run other commands (env, sudo, xargs, git -c ...), opaque words;
- options.py: option spellings and the options that make a program write or run code;
- command_paths.py: the places (paths) a command reads or writes;
- recursive_reads.py: programs that read whole folders;
- git_guard.py: git configuration that would run programs.
"""
