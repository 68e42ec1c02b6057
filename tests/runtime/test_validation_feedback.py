"""Schema feedback the model can act on in one round: every unexpected property listed,
the JSON type named with its article, and values no tool can use (lone surrogates, deep
nesting) refused before anything recurses into them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import call_tool, make_runtime, text_of


async def test_each_unexpected_property_is_listed(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    arguments = {"path": "a.txt", "from": 1, "$schema": "x", "zeta": True}
    result = await call_tool(runtime, "read_file", arguments)
    assert result.error is not None and result.error.code == "schema_mismatch"
    paths = [v["path"] for v in result.error.violations or []]
    assert paths == ["/$schema", "/from", "/zeta"]
    assert [v["keyword"] for v in result.error.violations or []] == ["additionalProperties"] * 3


async def test_each_missing_property_is_listed_once(tmp_path: Path) -> None:
    """Two required properties missing: each named once (the first was named twice and
    the second not at all)."""
    runtime = make_runtime(tmp_path)
    arguments = {"source": "a.txt", "destination": "b.txt"}
    result = await call_tool(runtime, "move_file", arguments)
    assert result.error is not None and result.error.code == "schema_mismatch"
    found = [(v["path"], v["keyword"]) for v in result.error.violations or []]
    assert found == [
        ("/destination", "additionalProperties"),
        ("/source", "additionalProperties"),
        ("/source_path", "required"),
        ("/destination_path", "required"),
    ], found
    assert text_of(result).count('"source_path" is required') == 1


async def test_where_parameters_go_is_said_only_when_the_shape_is_off(
    tmp_path: Path,
) -> None:
    """A wrong value at the right place gets no "put the parameters at the root" line (it
    read as an accusation); a missing or unknown property, where it may be the cause, does."""
    runtime = make_runtime(tmp_path)
    placement = "read_file takes its parameters at the root of the tool call's input."
    wrong_type = await call_tool(runtime, "read_file", {"path": 5})
    assert wrong_type.error is not None and wrong_type.error.code == "schema_mismatch"
    assert placement not in text_of(wrong_type)
    wrapped = await call_tool(runtime, "read_file", {"input": {"path": "a.txt"}})
    assert wrapped.error is not None and placement in text_of(wrapped)
    # A near miss of a known name is a misspelling, not a misplacement: the name is offered.
    misspelt = await call_tool(runtime, "read_file", {"file_path": "a.txt"})
    assert misspelt.error is not None and placement not in text_of(misspelt)
    assert "- /file_path [additionalProperties]: expected no such property; allowed: " in (
        text_of(misspelt)
    )
    assert '(did you mean "path"?)' in text_of(misspelt)


@pytest.mark.parametrize(
    ("tool", "arguments", "meant"),
    [
        ("bash", {"command": "true", "timeout": 5}, "timeout_ms"),
        ("edit_file", {"path": "a.txt", "old_strng": "a", "new_string": "b"}, "old_string"),
        ("move_file", {"source": "a.txt", "destination_path": "b.txt"}, "source_path"),
    ],
)
async def test_a_misspelt_property_names_the_one_meant(
    tmp_path: Path, tool: str, arguments: dict[str, object], meant: str
) -> None:
    runtime = make_runtime(tmp_path)
    result = await call_tool(runtime, tool, arguments)
    assert result.error is not None and result.error.code == "schema_mismatch"
    assert f'(did you mean "{meant}"?)' in text_of(result), text_of(result)
    assert "takes its parameters at the root" not in text_of(result)


async def test_at_most_eight_violations(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    arguments = {"path": "a.txt", **{f"extra{i}": i for i in range(12)}}
    result = await call_tool(runtime, "read_file", arguments)
    assert result.error is not None
    assert len(result.error.violations or []) == 8


async def test_a_non_object_is_named_with_its_article(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    result = await call_tool(runtime, "read_file", [1, 2])
    assert "- / [json]: expected a JSON object (got an array)" in text_of(result)


async def test_lone_surrogates_are_refused_before_the_tool_runs(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, mode="bypass")
    result = await call_tool(runtime, "write_file", {"path": "a\udfffb.txt", "content": "x"})
    assert result.error is not None and result.error.code == "schema_mismatch"
    assert result.error.violations == [
        {
            "path": "/path",
            "keyword": "unicode",
            "expected": "valid Unicode text (a lone surrogate U+D800-U+DFFF is not a character)",
        }
    ]
    assert list(tmp_path.iterdir()) == []
    # The feedback itself is valid UTF-8 (a key with a surrogate is shown escaped).
    keyed = await call_tool(runtime, "read_file", {"path": "a.txt", "\ud800": 1})
    text_of(keyed).encode("utf-8")
    assert "/\\ud800 [unicode]" in text_of(keyed)


async def test_deep_nesting_is_refused_without_recursion(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    deep: object = "x"
    for _ in range(100_000):
        deep = [deep]
    result = await call_tool(runtime, "read_file", {"path": deep})
    assert result.error is not None and result.error.code == "schema_mismatch"
    [violation] = result.error.violations or []
    assert violation["keyword"] == "maxDepth"
    assert violation["expected"] == "at most 64 levels of nesting"


async def test_arguments_valid_once_are_not_confused_with_others(tmp_path: Path) -> None:
    """Flat arguments that passed once are remembered (runtime/validation.py): a value of
    another JSON type with an equal Python value (true and 1, 1 and 1.0) is still checked."""
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    runtime = make_runtime(tmp_path)
    for _ in range(2):
        assert (await call_tool(runtime, "read_file", {"path": "a.txt", "offset": 1})).error is None
    for odd in (True, 1.5, "1", None):
        result = await call_tool(runtime, "read_file", {"path": "a.txt", "offset": odd})
        assert result.error is not None and result.error.code == "schema_mismatch", odd
    later = await call_tool(runtime, "read_file", {"offset": 1, "path": "a.txt"})
    assert later.error is None  # the same arguments in another order
    extra = await call_tool(runtime, "read_file", {"path": "a.txt", "offset": 1, "x": 1})
    assert extra.error is not None and extra.error.code == "schema_mismatch"
