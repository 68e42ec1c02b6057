"""Types and values in the words of JSON on the wire, for the errors a client author reads:
what a field expects (`string | null`, `"core" | "full"`, `object`), what a value is
(`number`, `array`), the shape of a params object (`{"name": string, "session"?: ...}`),
and cattrs' validation errors told field by field in those words (`misfits`). Never
Python's words (`str`, `Optional`, `dict`, `While structuring CallParams`)."""

from __future__ import annotations

import enum
import json
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import attrs
import cattrs
from cattrs.errors import AttributeValidationNote, ForbiddenExtraKeysError

_SCALARS: dict[Any, str] = {
    type(None): "null",
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
}
_UNIONS = (typing.Union, types.UnionType)
_SHOWN_MEMBERS = 8
_UNSEEN: Any = object()
"""A value the walk through an error could not follow (a key the wire spells otherwise)."""


class WireMismatch(ValueError):
    """A toolhost message or strict scalar field got other JSON; the message says what, in
    the wire's words (`expected string | null, got object`, `expected object, got array`)."""


def lone_surrogate(text: str) -> bool:
    """`text` holds a lone surrogate (JSON allows "\\ud800"): it is no Unicode text."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def kind_of(value: Any) -> str:
    """The JSON type of a value: null, boolean, number, string, array or object."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string with a lone surrogate" if lone_surrogate(value) else "string"
    if isinstance(value, list | tuple):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def expected(kind: Any) -> str:
    """What a field of this type takes, as JSON: `integer`, `string | null`, `1 | 2 | 3`."""
    if kind in _SCALARS:
        return _SCALARS[kind]
    origin = typing.get_origin(kind)
    if origin is Literal:
        return _either(json.dumps(value) for value in typing.get_args(kind))
    if origin in _UNIONS:
        return _either(expected(member) for member in typing.get_args(kind))
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return _either(json.dumps(member.value) for member in kind)
    if attrs.has(kind) or _is(origin or kind, Mapping):
        return "object"
    if _is(origin or kind, Sequence):
        return "array"
    return "any"


def shown(value: Any) -> str:
    """A value as an error may show it: a number, true, false or null as it is (cut short),
    else its JSON type (a string is not echoed)."""
    if value is None or isinstance(value, bool | int | float):
        text = json.dumps(value)
        return text if len(text) <= 24 else text[:24] + "..."
    return kind_of(value)


def shape(cls: type[Any]) -> str:
    """A params object's fields as the wire spells them; `?` marks one that may be left out
    (or null): `{"name": string, "session"?: string}`."""
    fields = []
    for field in attrs.fields(attrs.resolve_types(cls)):
        if field.default is attrs.NOTHING:
            fields.append(f'"{camel(field.name)}": {expected(field.type)}')
        else:
            taken = expected(field.type).removesuffix(" | null")
            fields.append(f'"{camel(field.name)}"?: {taken}')
    return "{" + ", ".join(fields) + "}"


def misfits(exc: BaseException, value: Any, path: str) -> list[str]:
    """cattrs' error for `value` (found at `path`), a line a field with the wire's names:
    `required field missing @ params.name`, `expected integer, got string @
    params.position.line`, `expected object, got null @ params`."""
    try:
        return _misfits(exc, value, path)
    except RecursionError:
        return [f"nested too deeply to check @ {path}"]


def _misfits(exc: BaseException, value: Any, path: str) -> list[str]:
    if not isinstance(exc, cattrs.ClassValidationError | cattrs.IterableValidationError):
        return [f"{_misfit(exc, None, value)} @ {path}"]
    container = dict if isinstance(exc, cattrs.ClassValidationError) else list | dict
    if value is not _UNSEEN and not isinstance(value, container):
        wanted = "object" if container is dict else "array"
        return [f"expected {wanted}, got {shown(value)} @ {path}"]
    notes, without = exc.group_exceptions()
    lines = []
    for inner, note in notes:
        if isinstance(note, AttributeValidationNote):
            key: Any = camel(note.name)
            where = f"{path}.{key}" if path else key
        else:
            key = note.index
            where = f"{path}[{json.dumps(key[:40] if isinstance(key, str) else key)}]"
        found = _child(value, key)
        if isinstance(inner, cattrs.BaseValidationError):
            lines += _misfits(inner, found, where)
        else:
            lines.append(f"{_misfit(inner, note.type, found)} @ {where}")
    return lines + [f"{_misfit(inner, None, value)} @ {path}" for inner in without]


def _child(value: Any, key: Any) -> Any:
    if isinstance(value, dict):
        return value.get(key, _UNSEEN)
    if isinstance(value, list) and isinstance(key, int) and -len(value) <= key < len(value):
        return value[key]
    return _UNSEEN


def _misfit(exc: BaseException, kind: Any, value: Any) -> str:
    if isinstance(exc, KeyError):
        return "required field missing"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, WireMismatch):
        return str(exc)
    if isinstance(exc, ForbiddenExtraKeysError):
        return f"unknown fields: {', '.join(sorted(exc.extra_fields))[:200]}"
    if isinstance(exc, ValueError | TypeError) and kind is not None:
        wanted = expected(kind)
        got = shown(value) if value is not _UNSEEN else ""
        return f"expected {wanted}, got {got}" if got and got != wanted else f"expected {wanted}"
    if isinstance(exc, ValueError) and str(exc):  # a validator's own words
        text = str(exc).encode("utf-8", "backslashreplace").decode("utf-8")
        return f"invalid value ({text[:160]})"
    return "invalid value"


def camel(name: str) -> str:
    """A field's wire name (`text_document` -> `textDocument`; lsprotocol's `from_` -> `from`)."""
    head, *rest = name.rstrip("_").split("_")
    return head + "".join(part.title() for part in rest)


def _either(words: typing.Iterable[str]) -> str:
    unique = list(dict.fromkeys(words))
    listed = unique[:_SHOWN_MEMBERS] + (["..."] if len(unique) > _SHOWN_MEMBERS else [])
    return " | ".join(listed)


def _is(kind: Any, abstract: type[Any]) -> bool:
    return isinstance(kind, type) and issubclass(kind, abstract) and kind is not str
