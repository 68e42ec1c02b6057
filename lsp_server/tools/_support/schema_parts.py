"""Small builders for the tools' JSON Schemas, so every schema has the same shape."""

from __future__ import annotations

from typing import Any

from lsp_server.core.contract import JSON_SCHEMA_DIALECT


def object_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def string(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


def integer(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "integer", "description": description, **extra}


def boolean(description: str) -> dict[str, Any]:
    return {"type": "boolean", "description": description}
