"""Known secret values replaced by named placeholders: `‹secret:OPENAI_API_KEY›`.

A name, never `***`: the model learns that a secret stood there and which one, and the
placeholder is a text that no program accepts as the value, so it cannot be written back by
accident either (the writers refuse a new placeholder: write_back.py).

Speed: one `value in text` per known value (the C substring search, ~1 ms per value on
8 MB), then the spans of the values found only; a text with none is returned as it is.
Most values are tokens (base64, hex, `sk-...`: the characters of `_TOKEN`), and a tree
with key files knows many (the Go sources' test keys: 1,912 lines of 64 characters, 9 ms
on each 52 KB glob page). A token value can only stand inside a run of token characters
at least as long as itself: with many of them, the text's runs of 8 or more are found
once (as long as ~300 plain searches: ~0.1 s on 8 MB) and each length class (8-15,
16-31, ...) is looked for in the runs of its length only, which in most outputs are few.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

import attrs

OPEN = "‹secret:"
CLOSE = "›"

MIN_CHARS = 8
"""Shorter values are not redacted: they would replace ordinary words and numbers."""

_TOKEN_CHARS = "A-Za-z0-9+/=_-"
_TOKEN = re.compile(f"[{_TOKEN_CHARS}]+")
# Whole runs: a match starts where a run of MIN_CHARS or more does and takes all of it.
_LONG_RUN = re.compile(f"[{_TOKEN_CHARS}]{{{MIN_CHARS},}}")
_RUNS_PAY_FROM = 256
"""Token values from which finding the runs first costs less than a search for each."""


def placeholder(name: str) -> str:
    return f"{OPEN}{name}{CLOSE}"


@attrs.frozen
class Secret:
    value: str
    name: str
    """What the placeholder says: the variable (`GITHUB_TOKEN`), the file and key of a
    .env line (`.env:DB_PASSWORD`), or the secret file (`certs/server.key`)."""


def _variants(value: str) -> list[str]:
    """The value as programs commonly print it: raw, JSON-escaped, Python repr, escaped
    inside shell double quotes (`export -p`)."""
    forms = [value, json.dumps(value)[1:-1], repr(value)[1:-1]]
    shell = value
    for char in '\\"$`':
        shell = shell.replace(char, "\\" + char)
    forms.append(shell)
    return list(dict.fromkeys(forms))


class Redactor:
    """Built once per set of secrets (SecretValues rebuilds it when the set changes)."""

    def __init__(self, secrets: Iterable[Secret]) -> None:
        by_value: dict[str, str] = {}
        # Environment names sort before file names ('.' and lower case after upper):
        # a value known under both is named after its variable.
        for secret in sorted(secrets, key=lambda s: (s.name.startswith("."), s.name)):
            if len(secret.value) < MIN_CHARS:
                continue
            for form in _variants(secret.value):
                by_value.setdefault(form, placeholder(secret.name))
        # Longest first: a value inside a longer one never splits it.
        self._values = sorted(by_value, key=len, reverse=True)
        self._placeholders = by_value
        tokens = [value for value in self._values if _TOKEN.fullmatch(value)]
        if len(tokens) < _RUNS_PAY_FROM:
            tokens = []
        in_runs = set(tokens)
        self._elsewhere = [value for value in self._values if value not in in_runs]
        # The token values by length class: (the class's least length, its values).
        classes: dict[int, list[str]] = {}
        for value in tokens:
            classes.setdefault(1 << (len(value).bit_length() - 1), []).append(value)
        self._token_classes = sorted(classes.items())

    def __len__(self) -> int:
        return len(self._values)

    def _found(self, text: str) -> list[str]:
        """The values in `text`."""
        found = [value for value in self._elsewhere if value in text]
        if self._token_classes:
            runs = _LONG_RUN.findall(text)
            for least, values in self._token_classes:
                runs = [run for run in runs if len(run) >= least]
                if not runs:
                    break
                joined = "\n".join(runs)
                found += [value for value in values if value in joined]
        return found

    def redact(self, text: str) -> str:
        found = self._found(text)
        if not found:
            return text
        spans: list[tuple[int, int, str]] = []
        for value in found:
            at = text.find(value)
            while at >= 0:
                spans.append((at, -len(value), value))
                at = text.find(value, at + len(value))
        spans.sort()
        pieces: list[str] = []
        done = 0
        for start, negative_length, value in spans:
            if start < done:  # inside a longer value already replaced
                continue
            pieces.append(text[done:start])
            pieces.append(self._placeholders[value])
            done = start - negative_length
        pieces.append(text[done:])
        return "".join(pieces)
