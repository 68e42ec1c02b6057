"""Reproducible fuzzing of toolhost/call: the same seed gives the same calls, so any case
the harness finds is replayed by its (seed, index). Shared by tests/fuzz/test_fuzz_odd_input.py
(a CI-sized run) and bench/fuzz_calls.py (the long run behind docs/RELIABILITY.md).

The inputs are the odd ones that broke tools before: lone surrogates and NUL bytes in paths
and strings, symlink loops, deep nesting, wrong types, schema-shaped arguments with odd
values. Tools that run commands or reach the network (bash, jobs, web_fetch) are left out:
random commands are not something to run on a shared machine.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs

LEFT_OUT = {"bash", "job_output", "job_kill", "web_fetch", "use_capability"}

ODD_STRINGS = (
    "a.txt",
    "pkg/mod.py",
    "notes.ipynb",
    "loop",
    "loop/inner.txt",
    "ring-a",
    "ring-a/x",
    "pkg/back",
    "\ud800",
    "a\udfffb.txt",
    "pkg/\udc80mod.py",
    "\x00",
    "a.txt\x00.png",
    "../outside",
    "/etc/passwd",
    "~",
    "",
    ".",
    "日本語.txt",
    "😀",
    "x" * 300,
    "alpha",
    "beta\n",
    "def f",
    "*",
    "**/*.py",
    "[",
    "(?<=x)",
)


HUGE_STRINGS = (
    "é" * 70_000,  # 140 KB of UTF-8: over Linux's 128 KiB for one program argument
    "x/" * 2_100,  # a path past PATH_MAX (4096 bytes)
)
"""Drawn rarely (one string in a thousand): a grep pattern, a code_index query and a
command this long were internal_errors (they reached a program's argument list)."""


def make_fuzz_workspace(root: Path) -> None:
    """A small workspace with the traps: symlink loops, a link back up, odd names."""
    (root / "pkg").mkdir(parents=True)
    (root / "a.txt").write_text("alpha\nbeta\n")
    (root / "pkg" / "mod.py").write_text("def f(x):\n    return x\n\n\nclass C:\n    pass\n")
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "id": "c1",
                "metadata": {},
                "source": ["x = 1\n"],
                "outputs": [],
                "execution_count": None,
            }
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (root / "notes.ipynb").write_text(json.dumps(notebook))
    (root / "loop").symlink_to("loop")
    (root / "ring-a").symlink_to("ring-b")
    (root / "ring-b").symlink_to("ring-a")
    (root / "pkg" / "back").symlink_to("..")


def _deep(rng: random.Random) -> Any:
    depth = rng.choice((50, 200, 1200, 3000))
    value: Any = rng.choice(ODD_STRINGS)
    for _ in range(depth):
        value = [value] if rng.random() < 0.5 else {"k": value}
    return value


def _scalar(rng: random.Random) -> Any:
    return rng.choice(
        (
            rng.choice(ODD_STRINGS),
            rng.choice(ODD_STRINGS),
            rng.randint(-(2**40), 2**40),
            rng.choice((0, 1, -1, 2**63, 10**30)),
            rng.random() * 1e6,
            rng.choice((True, False, None)),
            [],
            {},
        )
    )


def _value_for(schema: dict[str, Any], rng: random.Random) -> Any:
    """Mostly what the schema asks for, with odd values; sometimes anything at all."""
    if rng.random() < 0.15:
        return _scalar(rng) if rng.random() < 0.8 else _deep(rng)
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        if rng.random() < 0.001:
            return rng.choice(HUGE_STRINGS)
        return rng.choice(ODD_STRINGS)
    if kind == "integer":
        low, high = schema.get("minimum", -5), schema.get("maximum", 10**6)
        return rng.randint(low, min(high, low + 10**6))
    if kind == "number":
        return rng.uniform(schema.get("minimum", 0), schema.get("maximum", 100))
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        items = schema.get("items", {})
        return [_value_for(items, rng) for _ in range(rng.randint(0, 3))]
    if kind == "object":
        return _object_for(schema, rng)
    return _scalar(rng)


def _object_for(schema: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    result: dict[str, Any] = {}
    for name, sub in properties.items():
        if name in required or rng.random() < 0.5:
            result[name] = _value_for(sub, rng)
    if rng.random() < 0.1:
        result[rng.choice(("from", "$schema", "\ud800", "_x"))] = _scalar(rng)
    return result


@attrs.frozen
class FuzzCall:
    index: int
    name: str
    arguments: Any
    surface: str


def fuzz_calls(tools: list[dict[str, Any]], count: int, seed: int) -> list[FuzzCall]:
    """`tools`: public entries (name, inputSchema, minimal flag as `surface`)."""
    rng = random.Random(seed)
    chosen = [t for t in tools if t["name"] not in LEFT_OUT]
    calls = []
    for index in range(count):
        tool = rng.choice(chosen)
        roll = rng.random()
        if roll < 0.7:
            arguments: Any = _object_for(tool["inputSchema"], rng)
        elif roll < 0.85:
            arguments = _deep(rng)
        else:
            arguments = _scalar(rng)
        calls.append(FuzzCall(index, tool["name"], arguments, tool["surface"]))
    return calls


@attrs.define
class FuzzReport:
    calls: int = 0
    codes: Counter[str] = attrs.Factory(Counter)
    internal_errors: list[str] = attrs.Factory(list)
    """`index tool: message` for every internal_error result (replay with the seed)."""
    unanswered: list[int] = attrs.Factory(list)

    def record(self, call: FuzzCall, result: dict[str, Any] | None) -> None:
        self.calls += 1
        if result is None:
            self.unanswered.append(call.index)
            return
        code = (result.get("error") or {}).get("code") or "ok"
        self.codes[code] += 1
        if code == "internal_error":
            self.internal_errors.append(f"{call.index} {call.name}: {result['error']['message']}")


Caller = Callable[[FuzzCall], Awaitable[dict[str, Any] | None]]


async def run_fuzz(calls: list[FuzzCall], caller: Caller) -> FuzzReport:
    report = FuzzReport()
    for call in calls:
        report.record(call, await caller(call))
    return report
