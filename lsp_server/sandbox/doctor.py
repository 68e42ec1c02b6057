"""`toolhost doctor`'s sandbox section: which backend runs commands here, in which mode,
and what that means for approvals (or why no sandbox can start, and how to fix it)."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from pathlib import Path

from lsp_server.sandbox.plan import SandboxMode
from lsp_server.sandbox.platforms import BackendFound

INSTALL_HINT = (
    "install it: `apt-get install bubblewrap` (as root; `./run setup` does it through "
    "scripts/setup/20-sandbox.sh)"
)


def where_mode_is_set(files: Sequence[Path]) -> str | None:
    """The last of `files` (lowest precedence first) whose [shell] sets `sandbox`."""
    found = None
    for path in files:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        shell = data.get("shell")
        if isinstance(shell, dict) and "sandbox" in shell:
            found = str(path)
    return found


def render_sandbox(
    mode: SandboxMode,
    found: BackendFound,
    network: bool,
    set_in: str | None,
    allow: Sequence[str] = (),
    hidden: Sequence[str] = (),
) -> str:
    """The doctor's lines about the sandbox; `hidden`: the credential files and folders
    sandboxed commands do not see (hidden.py)."""
    source = f" (set in {set_in})" if set_in else " (the default)"
    if mode == "off":
        return (
            f"sandbox: OFF{source}\n"
            "  commands run with your full permissions; every command that is not a plain "
            "read asks first (default policy)"
        )
    if found.executable is None:
        return (
            f"sandbox: UNAVAILABLE — {found.problem}\n"
            f"  mode {mode}{source} cannot start: failing closed, every command that is not a "
            f"plain read asks first\n  {INSTALL_HINT}"
        )
    net = "network allowed (shell.sandbox_network)" if network else "no network"
    if not network and allow:
        net = (
            f"network only to {', '.join(allow)} through toolhost's proxy "
            "(shell.sandbox_network_allow; not for plain reads or in readOnly mode)"
        )
    writes = (
        "the workspace (not .git, .vscode, .toolhost.toml or the other files that run code, "
        "existing or not: docs/SANDBOX.md) and a private /tmp are writable"
        if mode == "workspace-write"
        else "nothing is writable but a private /tmp"
    )
    unseen = (
        f"\n  hidden from sandboxed commands (your credentials; shell.sandbox_hide): "
        f"{', '.join(hidden)}"
        if hidden
        else ""
    )
    return (
        f"sandbox: {found.version or found.name} ({found.executable}), mode {mode}{source}"
        f'\n  {writes}; {net}; sandboxed commands run without asking, `sandbox: "network"` '
        f'and `sandbox: "off"` ask first{unseen}'
    )
