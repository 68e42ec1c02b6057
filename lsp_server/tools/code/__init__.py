"""Code tools: code_index and delete_symbol (tree-sitter), and the lsp_* tools answered by
the editor's language servers or toolhost's own."""
