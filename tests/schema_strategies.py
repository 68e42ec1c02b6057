"""Hypothesis strategies that generate values for toolhost's tool schemas.

hypothesis-jsonschema does not work with current hypothesis releases (its object
generator uses a removed internal API), and our schemas use a small subset of JSON Schema:
object, string (enum), integer (minimum/maximum), boolean, array (items, minItems).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        return st.text(max_size=40)
    if kind == "integer":
        return st.integers(schema.get("minimum", -(2**31)), schema.get("maximum", 2**31))
    if kind == "number":
        return st.floats(schema.get("minimum"), schema.get("maximum"), allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(
            from_schema(schema.get("items", {})),
            min_size=schema.get("minItems", 0),
            max_size=max(schema.get("minItems", 0), 4),
        )
    if kind == "object":
        properties = schema.get("properties", {})
        required = set(schema.get("required", []))
        return st.fixed_dictionaries(
            {name: from_schema(sub) for name, sub in properties.items() if name in required},
            optional={
                name: from_schema(sub) for name, sub in properties.items() if name not in required
            },
        )
    return st.none() | st.booleans() | st.integers() | st.text(max_size=10)
