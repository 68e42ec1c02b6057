"""A second opinion from the bash grammar (tree-sitter-bash) on what a command line runs.

shell_words.py's small lexer decides what rules and the classifier see; it marks what it
does not understand as opaque. tree-sitter-bash then reads the same text as a full bash
grammar and can only ADD opacity: a command substitution, process substitution or here-
document anywhere in the tree, a function definition (a name that runs something else),
an array subscript bash would evaluate, or any part the grammar cannot parse. Being
error-tolerant, tree-sitter never decides that something is safe -- it is a tripwire for
constructs the lexer might miss.
"""

from __future__ import annotations

import functools
import re

import tree_sitter
import tree_sitter_bash

# Node types that run code the words of a simple command do not show.
_CODE_NODES = {
    "command_substitution": "command substitution",
    "process_substitution": "process substitution",
    "heredoc_redirect": "here-document",
    "function_definition": "a shell function definition",
}
_LITERAL_INDEX = re.compile(r"[0-9@*]+")
_MAX_NODES = 20_000


@functools.cache
def _language() -> tree_sitter.Language:
    return tree_sitter.Language(tree_sitter_bash.language())


def hidden_code(command: str) -> str | None:
    """Why the bash grammar sees code in `command` that its words do not show, or None."""
    tree = tree_sitter.Parser(_language()).parse(command.encode("utf-8", "surrogateescape"))
    root = tree.root_node
    if root.has_error:
        return "the bash grammar cannot parse all of it"
    pending = [root]
    seen = 0
    while pending:
        node = pending.pop()
        seen += 1
        if seen > _MAX_NODES:
            return "the command is too large to check"
        reason = _CODE_NODES.get(node.type)
        if reason is not None:
            return reason
        if node.type == "subscript" and not _literal_index(node):
            return "an array subscript that bash evaluates"
        pending.extend(node.children)
    return None


def _literal_index(node: tree_sitter.Node) -> bool:
    index = node.child_by_field_name("index")
    text = (index.text or b"").decode("utf-8", "replace") if index is not None else ""
    return bool(_LITERAL_INDEX.fullmatch(text))
