"""delete_symbol refusals and line endings."""

from __future__ import annotations

import pytest

from lsp_server.codeintel import languages
from lsp_server.codeintel.delete import DeleteError, delete_symbol


def delete(language: str, source: str, name: str, **kw: str) -> str:
    spec = languages.language_named(language)
    assert spec is not None
    return delete_symbol(spec, source.encode(), name, **kw).new_source.decode()  # type: ignore[arg-type]


def refusal(language: str, source: str, name: str) -> DeleteError:
    with pytest.raises(DeleteError) as caught:
        delete(language, source, name)
    return caught.value


@pytest.mark.parametrize(
    ("language", "source", "name"),
    [
        ("go", "package p\n\nvar a, b int\n", "a"),
        ("javascript", "const a = () => 1, b = () => 2;\n", "b"),
        ("c", "int a, b;\n", "a"),
        ("typescript", "let a = 1, b = 2;\n", "a"),
    ],
)
def test_multi_name_declarations_are_refused(language: str, source: str, name: str) -> None:
    error = refusal(language, source, name)
    assert error.reason == "multi_name"
    assert "edit_file" in error.message


@pytest.mark.parametrize(
    ("language", "source", "name"),
    [
        ("python", "X = 1; Y = 2\n", "X"),
        ("c", "int a = 1; int b = 2;\n", "b"),
        ("javascript", "foo(); function bar() {}\n", "bar"),
        ("go", "package p\n\nfunc A() {}; func B() {}\n", "A"),
    ],
)
def test_shared_lines_are_refused(language: str, source: str, name: str) -> None:
    assert refusal(language, source, name).reason == "shared_line"


def test_a_result_that_would_not_parse_is_refused() -> None:
    source = "class Only:\n    def method(self):\n        return 1\n"
    error = refusal("python", source, "method")
    assert error.reason == "syntax_error"
    assert "nothing was written" in error.message


def test_crlf_line_endings_are_kept() -> None:
    source = "def a():\r\n    return 1\r\n\r\n\r\ndef b():\r\n    return 2\r\n"
    assert delete("python", source, "a") == "def b():\r\n    return 2\r\n"
    assert delete("python", source, "b") == "def a():\r\n    return 1\r\n"


def test_trailing_comment_on_the_last_line_goes_too() -> None:
    source = "int keep(void) { return 0; }\n\nint drop(void) { return 1; } // gone\n"
    assert delete("c", source, "drop") == "int keep(void) { return 0; }\n"


def test_rust_attribute_on_the_same_line() -> None:
    source = "fn keep() {}\n\n#[inline] fn drop() {}\n"
    assert delete("rust", source, "drop") == "fn keep() {}\n"


def test_method_picked_by_kind_and_dotted_parent() -> None:
    source = (
        "class A:\n    class B:\n        def f(self):\n            pass\n\n"
        "        def g(self):\n            pass\n\n\ndef f():\n    pass\n"
    )
    result = delete("python", source, "f", parent="A.B")
    assert "def f(self)" not in result and "def f():" in result
    assert delete("python", source, "f", kind="function").count("def f") == 1
