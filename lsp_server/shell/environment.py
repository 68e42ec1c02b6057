"""The environment of every command: nothing in it may wait for a human, and no credential
of the server's own environment reaches it.

Editors, pagers, password prompts, "Ok to proceed?" questions and colour codes are the
usual ways an agent's shell hangs or floods; each variable below closes one of them.
Credentials (`*_API_KEY`, `*_TOKEN`, `*PASSWORD*`, `AWS_*` ...: lsp_server/secrets/names.py)
are left out unless the user passes them by name (`shell.env_pass`): whatever a command
prints reaches the model.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping

from lsp_server.secrets.names import CredentialNames

# The marker every process of a command inherits. Processes that leave the process group
# (setsid, double forks into a new session) are still found by it in /proc.
MARKER_VARIABLE = "TOOLHOST_JOB"

NON_INTERACTIVE: Mapping[str, str] = {
    # git: no editor for commit messages or rebases, no password prompt, no pager.
    "GIT_EDITOR": "true",
    "GIT_SEQUENCE_EDITOR": "true",
    "GIT_TERMINAL_PROMPT": "0",
    # An askpass helper from the editor (VS Code sets one) would open a dialog; `true`
    # answers every question with nothing, so authentication fails at once instead.
    "GIT_ASKPASS": "true",
    "SSH_ASKPASS_REQUIRE": "never",
    "GCM_INTERACTIVE": "never",
    "EDITOR": "true",
    "VISUAL": "true",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "MANPAGER": "cat",
    "SYSTEMD_PAGER": "",
    # Tools that change behaviour (no spinners, no questions) under CI.
    "CI": "1",
    "npm_config_yes": "true",
    "PIP_NO_INPUT": "1",
    "DEBIAN_FRONTEND": "noninteractive",
    "TERM": "dumb",
    "NO_COLOR": "1",
    # Python children print as they go, so progress and interleaving stay truthful.
    "PYTHONUNBUFFERED": "1",
}

# Removed: start-up files a non-interactive shell would source, and askpass programs.
REMOVED = ("BASH_ENV", "ENV", "PROMPT_COMMAND", "SSH_ASKPASS", "DISPLAY_ASKPASS")


def command_environment(
    marker: str, base: Mapping[str, str] | None = None, names: CredentialNames | None = None
) -> dict[str, str]:
    """`base` (the server's environment) without its credentials, made non-interactive."""
    names = names or CredentialNames()
    source = os.environ if base is None else base
    env = {name: value for name, value in source.items() if not names.withheld(name, value)}
    for name in REMOVED:
        env.pop(name, None)
    env.update(NON_INTERACTIVE)
    # ssh without a terminal would still try an askpass program; BatchMode refuses at once.
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    env[MARKER_VARIABLE] = marker
    return env


def shell_program(env: Mapping[str, str]) -> list[str]:
    """`bash -c`, or `sh -c` on systems without bash."""
    bash = shutil.which("bash", path=env.get("PATH"))
    if bash is not None:
        return [bash, "-c"]
    return [shutil.which("sh", path=env.get("PATH")) or "/bin/sh", "-c"]
