"""Code intelligence with tree-sitter: language table, outlines, the symbol index, and
symbol deletion. A pure package: it knows nothing of the runtime or the server."""
