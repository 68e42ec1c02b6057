"""The Emacs package names every toolhost/* method through `toolhost-method' and the
generated table, and handles every server->client method of the server's one table (the
generated names themselves are compared in tests/protocol/test_protocol_tables.py).
Read from the sources: no Emacs needed."""

from __future__ import annotations

import re

from lsp_server import protocol
from tests.emacs.conftest import PACKAGE_DIR

GENERATED = PACKAGE_DIR / "toolhost-protocol.el"
HANDLER = re.compile(
    r"\(cl-defmethod eglot-handle-(request|notification)\s+"
    r"\(\(\w+ toolhost-server\)\s+\(\w+ \(eql \(toolhost-method ([\w-]+)\)\)\)"
)


def generated_methods() -> dict[str, str]:
    """Key -> method of the generated table (save-document -> toolhost/saveDocument)."""
    text = GENERATED.read_text(encoding="utf-8")
    return dict(re.findall(r"\(([\w-]+) \. (toolhost/\w+)\)", text))


def sources() -> dict[str, str]:
    """The package's hand-written files, by name."""
    return {
        path.name: path.read_text(encoding="utf-8")
        for path in sorted(PACKAGE_DIR.glob("*.el"))
        if path != GENERATED
    }


def code_only(text: str) -> str:
    """TEXT without its comments, strings and character literals (?\\" ?;)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "?":
            i += 3 if text[i + 1 : i + 2] == "\\" else 2
        elif char == ";":
            i = text.find("\n", i) if "\n" in text[i:] else len(text)
        elif char == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
        else:
            out.append(char)
            i += 1
    return "".join(out)


def test_code_only_drops_comments_strings_and_characters() -> None:
    text = '(a "x \\" ;y" ?\\" ?; b) ; toolhost/call\n(c)'
    assert code_only(text) == "(a    b) \n(c)"


def test_every_method_key_is_in_the_generated_table() -> None:
    keys = set(generated_methods())
    used = {
        (name, key)
        for name, text in sources().items()
        for key in re.findall(r"\(toolhost-method ([\w-]+)\)", code_only(text))
    }
    assert used, "no (toolhost-method KEY) found: did the package stop using the table?"
    assert {(name, key) for name, key in used if key not in keys} == set()


def test_no_method_is_spelt_by_hand_in_code() -> None:
    by_hand = {
        (name, method)
        for name, text in sources().items()
        for method in re.findall(r"toolhost/\w+", code_only(text))
    }
    assert by_hand == set(), "name methods with (toolhost-method KEY)"


def test_methods_named_in_docs_and_comments_exist() -> None:
    methods = {spec.method for spec in protocol.METHODS}
    named = {
        (name, method)
        for name, text in sources().items()
        for method in re.findall(r"toolhost/[A-Za-z]+", text)
    }
    assert {(name, method) for name, method in named if method not in methods} == set()


def test_handlers_cover_every_server_to_client_method() -> None:
    keys = generated_methods()
    handled = {
        (kind, keys.get(key, key))
        for text in sources().values()
        for kind, key in HANDLER.findall(code_only(text))
    }
    expected = {
        ("notification" if spec.result is None else "request", spec.method)
        for spec in protocol.METHODS
        if spec.direction == "server->client"
    }
    assert expected <= handled, f"not handled: {sorted(expected - handled)}"
    assert {method for _, method in handled} <= {spec.method for spec in protocol.METHODS}
