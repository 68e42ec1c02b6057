"""The parity cases: (pattern, grep arguments) and the rg flags that mean the same."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from lsp_server.search.render import NO_MATCHES
from tests.search.conftest import SECRET_GLOBS

CASES: list[tuple[str, dict[str, Any]]] = [
    ("hello", {}),
    ("TODO", {}),
    ("foo_bar", {}),
    ("[0-9]{2,}", {}),
    ("foo[a-z]+", {}),
    (r"\bfoo\w*", {}),
    ("^def ", {}),
    (r"value\)$", {}),
    ("^$", {}),
    ("alpha|gamma", {}),
    ("(hello|HELLO) ", {}),
    ("café", {}),
    ("straße", {"ignore_case": True}),
    ("[α-ω]+", {}),
    ("日本", {}),
    (r"\d+", {"include": "*.py"}),
    ("hello", {"include": "src/**/*.py"}),
    ("hello", {"include": "*.{ts,css}"}),
    ("hello", {"ignore_case": True}),
    ("return", {"context": 1}),
    ("alpha", {"context": 2}),
    ("hello", {"mode": "files_with_matches"}),
    ("hello", {"mode": "count"}),
    ("o", {"mode": "count", "include": "*.py"}),
    ("foo\nbar", {"multiline": True}),
    (r"start[\s\S]*?end", {"multiline": True}),
    (r"(?i)omega", {}),
    ("[[:upper:]]{4,}", {}),
    ("no-such-text-anywhere", {}),
    ("hello", {"include": "!*.py"}),
    ("hello", {"include": "*.txt"}),
    ("hello", {"include": "src/**"}),
    ("hello", {"include": "docs/"}),
    ("foo\nbar", {"multiline": True, "context": 1}),
    ("HELLO", {"ignore_case": True, "include": "*.{py,md}", "mode": "count"}),
    (r"^\s+return", {"context": 3}),
    ("café|straße", {"ignore_case": True, "mode": "files_with_matches"}),
]


def rg_flags(args: dict[str, Any]) -> list[str]:
    flags: list[str] = []
    if args.get("ignore_case"):
        flags.append("-i")
    if args.get("include"):
        flags.append(f"--glob={args['include']}")
    if args.get("context"):
        flags.append(f"-C{args['context']}")
    if args.get("multiline"):
        flags.append("-U")
    mode = args.get("mode", "content")
    if mode == "files_with_matches":
        flags.append("-l")
    elif mode == "count":
        flags.append("-c")
    return flags


CASE_IDS = [f"{i}:{case[0]!r}" for i, case in enumerate(CASES)]


def rg_direct(rg: Path, root: Path, pattern: str, args: dict[str, Any]) -> str:
    command = [
        str(rg),
        "--sort=path",
        "-n",
        "--no-heading",
        "--color=never",
        "--no-config",
        "--no-require-git",
        "--no-ignore-global",
        *rg_flags(args),
        *[f"--glob=!{glob}" for glob in SECRET_GLOBS],
        "-e",
        pattern,
    ]
    done = subprocess.run(
        command, cwd=root, stdin=subprocess.DEVNULL, capture_output=True, check=False
    )
    nothing_searched = b"No files were searched" in done.stderr
    assert done.returncode in (0, 1) or nothing_searched, done.stderr
    return done.stdout.decode().rstrip("\n") or NO_MATCHES
