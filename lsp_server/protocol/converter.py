"""The cattrs converter of toolhost messages: camelCase keys on the wire, strict scalars."""

from __future__ import annotations

import types
import typing
from typing import Any, Literal

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.strategies import configure_union_passthrough

from lsp_server.protocol.methods import MESSAGE_TYPES
from lsp_server.protocol.wire_types import (
    WireMismatch,
    camel,
    expected,
    lone_surrogate,
    shown,
)

_SCALARS = (str, int, bool)


def _accepts(kind: Any, value: Any) -> bool:
    if kind is type(None):
        return value is None
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is str and isinstance(value, str):
        # A lone surrogate (JSON allows "\ud800") is no text: it cannot be logged or stored.
        return not lone_surrogate(value)
    return isinstance(value, kind)


def _strict_scalar_hook(field_type: Any) -> Any | None:
    """A structure hook for a field of scalars (str, int, bool, None, literals) that refuses
    other JSON instead of coercing it (cattrs turns 7 into "7" and [] into "[]"): a
    malformed envelope must get a JSON-RPC error, not a call under a made-up session."""
    members = typing.get_args(field_type) if typing.get_origin(field_type) in _UNIONS else ()
    kinds = members or (field_type,)
    literals: list[Any] = []
    plain: list[Any] = []
    for kind in kinds:
        if typing.get_origin(kind) is Literal:
            literals.extend(typing.get_args(kind))
        elif kind in _SCALARS or kind is type(None):
            plain.append(kind)
        else:
            return None

    def structure(value: Any, _: Any) -> Any:
        if (isinstance(value, str) and value in literals) or any(_accepts(k, value) for k in plain):
            return value
        raise WireMismatch(f"expected {expected(field_type)}, got {shown(value)}")

    return structure


_UNIONS = (typing.Union, types.UnionType)


def _renames(cls: type[Any]) -> dict[str, Any]:
    renames = {}
    for f in attrs.fields(attrs.resolve_types(cls)):
        hook = _strict_scalar_hook(f.type)
        renames[f.name] = (
            override(rename=camel(f.name), struct_hook=hook)
            if hook
            else override(rename=camel(f.name))
        )
    return renames


def structure_fn(cls: type[Any], converter: cattrs.Converter) -> Any:
    """The structure hook of one toolhost message type (camelCase, strict scalars). It takes
    a JSON object only: cattrs alone reads `[]` or `"x"` as the type with every field left
    out (`"session" in []` is False), so `toolhost/status` with `"x"` got an answer."""
    fields = make_dict_structure_fn(cls, converter, **_renames(cls))

    def structure(value: Any, kind: Any) -> Any:
        if not isinstance(value, dict):
            raise WireMismatch(f"expected object, got {shown(value)}")
        return fields(value, kind)

    return structure


def unstructure_fn(cls: type[Any], converter: cattrs.Converter) -> Any:
    """The unstructure hook of one toolhost message type (camelCase keys)."""
    return make_dict_unstructure_fn(cls, converter, **_renames(cls))


def register_message_hooks(converter: cattrs.Converter) -> cattrs.Converter:
    """camelCase keys on the wire for every toolhost message type; scalar fields strict."""
    for cls in MESSAGE_TYPES:
        converter.register_structure_hook(cls, structure_fn(cls, converter))
        converter.register_unstructure_hook(cls, unstructure_fn(cls, converter))
    return converter


def message_converter() -> cattrs.Converter:
    """A converter of toolhost's messages that makes each type's hooks on its first use: the
    CLI and `toolhost mcp`'s local runtime convert a call's result and little else, and
    making the hooks of all 31 types took ~30 ms of their first call."""
    converter = cattrs.Converter()
    # Plain cattrs has no hook for unions of primitives (work_done_token: str | int | None).
    configure_union_passthrough(str | int | float | bool | None, converter)
    known = frozenset(MESSAGE_TYPES)

    def is_message(cls: Any) -> bool:
        return isinstance(cls, type) and cls in known

    converter.register_structure_hook_factory(is_message, lambda cls: structure_fn(cls, converter))
    converter.register_unstructure_hook_factory(
        is_message, lambda cls: unstructure_fn(cls, converter)
    )
    return converter
