"""The environment of every command: nothing in it may wait for a human, and no credential
of the server's own environment reaches it.

Editors, pagers, password prompts, "Ok to proceed?" questions and colour codes are the
usual ways an agent's shell hangs or floods; each variable below closes one of them.
A command the user allowed may still ask for a password: `askpass` (a grant of
lsp_server/secrets/askpass.py) points SSH_ASKPASS, SUDO_ASKPASS, GIT_ASKPASS and a git
credential helper at toolhost's own helper, which asks the user, never the model.

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
    marker: str,
    base: Mapping[str, str] | None = None,
    names: CredentialNames | None = None,
    askpass: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """`base` (the server's environment) without its credentials, made non-interactive;
    with `askpass` (Grant.environment), password prompts go to toolhost's helper."""
    names = names or CredentialNames()
    source = os.environ if base is None else base
    env = {name: value for name, value in source.items() if not names.withheld(name, value)}
    for name in REMOVED:
        env.pop(name, None)
    env.update(NON_INTERACTIVE)
    # ssh without a terminal would still try an askpass program; BatchMode refuses at once.
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    env[MARKER_VARIABLE] = marker
    if askpass:
        _ask_through(env, askpass)
    return env


def _ask_through(env: dict[str, str], askpass: Mapping[str, str]) -> None:
    """The grant's variables, and its credential helper as git's only one: the inherited
    helpers are reset (an empty value), after the configuration the server's own
    environment passes in GIT_CONFIG_COUNT/KEY/VALUE."""
    variables = dict(askpass)
    helper = variables.pop("TOOLHOST_CREDENTIAL_HELPER", None)
    env.update(variables)
    if helper is None:
        return
    try:
        count = max(0, int(env.get("GIT_CONFIG_COUNT", "0")))
    except ValueError:
        count = 0
    for value in ("", helper):
        env[f"GIT_CONFIG_KEY_{count}"] = "credential.helper"
        env[f"GIT_CONFIG_VALUE_{count}"] = value
        count += 1
    env["GIT_CONFIG_COUNT"] = str(count)


def shell_program(env: Mapping[str, str]) -> list[str]:
    """`bash -c`, or `sh -c` on systems without bash."""
    bash = shutil.which("bash", path=env.get("PATH"))
    if bash is not None:
        return [bash, "-c"]
    return [shutil.which("sh", path=env.get("PATH")) or "/bin/sh", "-c"]
