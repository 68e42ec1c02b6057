"""A pygls LanguageClient that keeps toolhost messages as plain JSON.

Used by `toolhost demo`, the benchmarks and the tests: pygls would otherwise turn unknown
methods' params and results into namedtuples and rename keys such as `$schema` or `from`.
"""

from __future__ import annotations

from typing import Any

import cattrs
from lsprotocol.converters import get_converter
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage


def _keep(obj: dict[str, Any], cls: type[Any]) -> Any:
    return cls(**obj)


def plain_json_converter() -> cattrs.Converter:
    converter = get_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCResponseMessage, JsonRPCNotification):
        converter.register_structure_hook(cls, _keep)
    return converter
