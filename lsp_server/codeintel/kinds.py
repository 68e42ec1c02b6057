"""Symbol kinds, normalised across languages, and the aliases accepted on input."""

from __future__ import annotations

KINDS: tuple[str, ...] = (
    "function",
    "method",
    "class",
    "struct",
    "interface",
    "trait",
    "enum",
    "type",
    "const",
    "var",
    "module",
    "field",
)

# Kinds that contain methods: a function defined directly inside one is a method.
CONTAINER_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "impl"})

# Search ranks definitions before fields; this order breaks ties after the name match.
KIND_RANK: dict[str, int] = {kind: rank for rank, kind in enumerate(KINDS)}

ALIASES: dict[str, str] = {
    "func": "function",
    "fn": "function",
    "def": "function",
    "fun": "function",
    "function": "function",
    "procedure": "function",
    "meth": "method",
    "method": "method",
    "class": "class",
    "struct": "struct",
    "record": "struct",
    "union": "struct",
    "interface": "interface",
    "protocol": "interface",
    "trait": "trait",
    "enum": "enum",
    "type": "type",
    "typedef": "type",
    "alias": "type",
    "const": "const",
    "constant": "const",
    "var": "var",
    "variable": "var",
    "let": "var",
    "module": "module",
    "mod": "module",
    "namespace": "module",
    "package": "module",
    "field": "field",
    "property": "field",
    "member": "field",
    "attribute": "field",
}


def normalise_kind(text: str) -> str | None:
    """The normalised kind for user input (`fn`, `def`, `Method`), or None if unknown."""
    return ALIASES.get(text.strip().lower())
