"""Argument validation before anything else happens: violations, signature, feedback."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import Any, Literal

import attrs
import jsonschema
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from lsp_server.core.contract import ContractEntry
from lsp_server.protocol.wire_types import lone_surrogate

MAX_VIOLATIONS = 8
MAX_FEEDBACK_BYTES = 4096
MAX_DEPTH = 64
"""Nesting no tool schema needs; deeper values are refused before jsonschema (and json)
would recurse into them."""

Placement = Literal["root", "arguments"]


@attrs.frozen
class Violation:
    path: str
    keyword: str
    expected: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "keyword": self.keyword, "expected": self.expected}


@attrs.frozen
class ValidationFailure:
    tool: str
    fingerprint: str
    violations: tuple[Violation, ...]
    signature: str
    feedback: str


def _pointer(parts: Any) -> str:
    # Lone surrogates are shown escaped: the feedback itself must be valid UTF-8.
    items = [_printable(str(p)).replace("~", "~0").replace("/", "~1") for p in parts]
    return "/" + "/".join(items) if items else "/"


def _printable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def odd_values(arguments: Any) -> list[Violation]:
    """What no tool can use and a schema cannot state: nesting deeper than MAX_DEPTH, and
    strings or keys with lone surrogates (no file name or UTF-8 text can hold them).
    Iterative, so a value nested 100,000 levels deep costs a loop, not the stack."""
    found: list[Violation] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(arguments, ())]
    while stack and len(found) < MAX_VIOLATIONS:
        value, parts = stack.pop()
        if len(parts) > MAX_DEPTH:
            found.append(
                Violation(_pointer(parts), "maxDepth", f"at most {MAX_DEPTH} levels of nesting")
            )
            continue
        if isinstance(value, str):
            if lone_surrogate(value):
                found.append(Violation(_pointer(parts), "unicode", _NO_SURROGATES))
        elif isinstance(value, Mapping):
            for key, item in reversed(list(value.items())):
                if isinstance(key, str) and lone_surrogate(key):
                    found.append(Violation(_pointer((*parts, key)), "unicode", _NO_SURROGATES))
                stack.append((item, (*parts, key)))
        elif isinstance(value, list):
            stack.extend((item, (*parts, i)) for i, item in reversed(list(enumerate(value))))
    return found[:MAX_VIOLATIONS]


_NO_SURROGATES = "valid Unicode text (a lone surrogate U+D800-U+DFFF is not a character)"


def _expected(error: ValidationError) -> tuple[str, str]:
    """(extra path segment, description of the constraint) without echoing the value."""
    keyword = str(error.validator)
    schema_value: Any = error.validator_value
    schema: Any = error.schema
    instance: Any = error.instance
    if keyword == "required":
        # One violation per missing property is made by _violations; this is the first.
        missing = [name for name in schema_value if name not in (instance or {})]
        name = missing[0] if missing else "?"
        return name, f'property "{name}" is required'
    if keyword == "additionalProperties":
        # One violation per unexpected property is made by _violations; this is the text.
        allowed = sorted((schema.get("properties") or {}).keys())
        return "", "no such property; allowed: " + ", ".join(allowed)
    if keyword == "type":
        return (
            "",
            f"type {schema_value if isinstance(schema_value, str) else '/'.join(schema_value)}",
        )
    if keyword == "enum":
        return "", "one of " + ", ".join(json.dumps(v) for v in schema_value)
    if keyword == "const":
        return "", f"exactly {json.dumps(schema_value)}"
    if keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        words = {
            "minimum": ">=",
            "maximum": "<=",
            "exclusiveMinimum": ">",
            "exclusiveMaximum": "<",
        }
        return "", f"a number {words[keyword]} {schema_value}"
    if keyword in ("minLength", "maxLength", "minItems", "maxItems"):
        what = "characters" if "Length" in keyword else "items"
        bound = "at least" if keyword.startswith("min") else "at most"
        return "", f"{bound} {schema_value} {what}"
    if keyword == "pattern":
        return "", f"a string matching {schema_value}"
    if keyword == "format":
        return "", f"a string in {schema_value} format"
    if keyword in ("oneOf", "anyOf"):
        return "", f"a value matching {keyword} of the schema"
    return "", f"a value satisfying {keyword}"


def _violations(error: ValidationError) -> list[Violation]:
    """One per problem: an object with two unexpected properties gives two, so the model
    fixes both at once instead of one per round."""
    extra, expected = _expected(error)
    base = list(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, Mapping):
        schema: Any = error.schema
        known = schema.get("properties") or {}
        unexpected = sorted(str(k) for k in error.instance if k not in known)
        return [
            Violation(
                _pointer([*base, name]), "additionalProperties", expected + _meant(name, known)
            )
            for name in unexpected
        ]
    if error.validator == "required" and isinstance(error.instance, Mapping):
        # jsonschema reports each missing property in an error of its own, each naming the
        # whole list: one violation per name, made once (the caller drops repeats).
        wanted: Any = error.validator_value
        return [
            Violation(_pointer([*base, name]), "required", f'property "{name}" is required')
            for name in wanted
            if name not in error.instance
        ]
    parts = base + ([extra] if extra else [])
    return [Violation(_pointer(parts), str(error.validator), expected)]


VALID_CACHE_SIZE = 512
SCALAR_TYPES = (str, int, float, bool, type(None))
MAX_CACHED_STRING = 1024


def flat_key(fingerprint: str, args: dict[str, Any]) -> tuple[Any, ...] | None:
    """A key for arguments that are all scalars (a path, an offset, a flag): the schema's
    fingerprint and each (name, type, value), so `true` and `1` or `1` and `1.0` never share
    a key. None (not cached) for nested or long values."""
    items = []
    for name, value in args.items():
        kind = type(value)
        if type(name) is not str or kind not in SCALAR_TYPES:
            return None
        if kind is str and len(value) > MAX_CACHED_STRING:
            return None
        items.append((name, kind, value))
    items.sort(key=lambda item: item[0])
    return (fingerprint, *items)


class Validators:
    """Compiled once per schema fingerprint. Flat arguments that were valid once are
    remembered (bounded): the same read of the same file is not validated again."""

    def __init__(self) -> None:
        self._compiled: dict[str, Draft202012Validator] = {}
        self._valid: set[tuple[Any, ...]] = set()

    def validator(self, entry: ContractEntry) -> Draft202012Validator:
        fp = entry.fingerprint
        compiled = self._compiled.get(fp)
        if compiled is None:
            compiled = Draft202012Validator(
                dict(entry.schema), format_checker=Draft202012Validator.FORMAT_CHECKER
            )
            self._compiled[fp] = compiled
        return compiled

    def validate(
        self, entry: ContractEntry, arguments: Any, placement: Placement = "root"
    ) -> tuple[dict[str, Any], ValidationFailure | None]:
        """Return (arguments as an object, failure or None). Null/empty means {}."""
        if arguments is None or arguments == "":
            arguments = {}
        if not isinstance(arguments, Mapping):
            kind = type(arguments).__name__
            violation = Violation("/", "json", f"a JSON object (got {_json_kind(kind)})")
            return {}, self._failure(entry, [violation], placement, None)
        args = dict(arguments)
        key = flat_key(entry.fingerprint, args)
        if key is not None and key in self._valid:
            return args, None
        odd = odd_values(args)
        if odd:
            return args, self._failure(entry, odd, placement, None)
        errors = sorted(
            self.validator(entry).iter_errors(args),
            key=lambda e: (list(map(str, e.absolute_path)), str(e.validator)),
        )
        if not errors:
            if key is not None:
                if len(self._valid) >= VALID_CACHE_SIZE:
                    self._valid.clear()
                self._valid.add(key)
            return args, None
        found = dict.fromkeys(v for error in errors for v in _violations(error))
        violations = list(found)[:MAX_VIOLATIONS]
        return args, self._failure(entry, violations, placement, args)

    def _failure(
        self,
        entry: ContractEntry,
        violations: list[Violation],
        placement: Placement,
        args: dict[str, Any] | None,
    ) -> ValidationFailure:
        fp16 = entry.fingerprint[:16]
        category = violations[0].keyword
        signature = f"argument_validation:{entry.name}:{fp16}:{category}"
        lines = [
            f"schema_mismatch: the arguments for {entry.name} do not match its schema "
            f"(fingerprint {fp16}); the call was NOT executed.",
            "Violations:",
        ]
        lines += [f"- {v.path} [{v.keyword}]: expected {v.expected}" for v in violations]
        if _shape_is_off(violations):
            lines.append(_placement_line(entry.name, placement, fp16))
        hint = self._wrapper_hint(entry, args)
        if hint:
            lines.append(hint)
        lines.append("Fix the listed parameters and call again.")
        return ValidationFailure(
            entry.name, entry.fingerprint, tuple(violations), signature, _clip("\n".join(lines))
        )

    def _wrapper_hint(self, entry: ContractEntry, args: dict[str, Any] | None) -> str | None:
        """Advise (never perform) removing a lone `arguments` wrapper that would validate."""
        if not args or list(args) != ["arguments"]:
            return None
        if "arguments" in (entry.schema.get("properties") or {}):
            return None
        inner = args["arguments"]
        if not isinstance(inner, Mapping):
            return None
        if not self.validator(entry).is_valid(dict(inner)):
            return None
        return (
            "Hint: the parameters are wrapped in an `arguments` object; remove that wrapper "
            "and pass them directly."
        )


def _json_kind(python_kind: str) -> str:
    """The JSON name of a Python value's type, with its article ("an array")."""
    return {
        "list": "an array",
        "str": "a string",
        "int": "a number",
        "float": "a number",
        "bool": "a boolean",
    }.get(python_kind, f"a {python_kind}")


def _clip(text: str) -> str:
    data = text.encode("utf-8")
    if len(data) <= MAX_FEEDBACK_BYTES:
        return text
    marker = "\n[truncated]"
    cut = data[: MAX_FEEDBACK_BYTES - len(marker)].decode("utf-8", errors="ignore")
    return cut + marker


def check_schema(schema: Mapping[str, Any]) -> None:
    """Raise when a schema is not a valid 2020-12 schema (used by contract tests)."""
    Draft202012Validator.check_schema(dict(schema))


_MEANT = '(did you mean "'


def _shape_is_off(violations: list[Violation]) -> bool:
    """Whether the parameters may be in the wrong place: not an object, an unknown property
    that is no near miss of a known one, or something missing with nothing unknown. A
    wrong value (a type, an enum) or a misspelt name (`timeout` for `timeout_ms`) gets no
    reminder of where parameters go."""
    unknown = [v for v in violations if v.keyword == "additionalProperties"]
    if any(v.keyword == "json" for v in violations):
        return True
    if any(_MEANT not in v.expected for v in unknown):
        return True
    return any(v.keyword == "required" for v in violations) and not unknown


def _meant(name: str, known: Mapping[str, Any]) -> str:
    """` (did you mean "timeout_ms"?)` when an unknown property is a near miss of a known
    one: the start or end of it (`source` of `source_path`, `path` of `file_path`), or
    nearly the same letters (`old_strng`)."""
    names = [str(k) for k in known]
    near = [k for k in names if _ends_alike(name.lower(), k.lower())]
    near = near or difflib.get_close_matches(name, names, n=1, cutoff=0.8)
    return f' {_MEANT}{near[0]}"?)' if near else ""


def _ends_alike(a: str, b: str) -> bool:
    """One name is the start or the end of the other (both at least 3 letters)."""
    if min(len(a), len(b)) < 3:
        return False
    return a.startswith(b) or a.endswith(b) or b.startswith(a) or b.endswith(a)


def _placement_line(tool: str, placement: Placement, fp16: str) -> str:
    if placement == "root":
        return f"{tool} takes its parameters at the root of the tool call's input."
    return (
        f"use_capability passes {tool}'s parameters inside `arguments` "
        f"(target schema fingerprint {fp16})."
    )


__all__ = ["ValidationFailure", "Validators", "Violation", "check_schema", "jsonschema"]
