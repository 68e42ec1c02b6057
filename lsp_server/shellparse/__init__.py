"""The bash parser, on the ground floor: policy rules, the read-only classifier and the
shell engine all read command lines through it.

- segments.py: what a parse hands back (simple commands, their words and redirections);
- shell_words.py: split_command / split_words, the entry points (tree-sitter loads on the
  first call, not at import);
- bash_split.py: the walk over tree-sitter-bash's tree that builds the segments;
- bash_tree.py: the one place that hands untrusted text to tree-sitter-bash, made safe.
"""
