"""Command text hidden in options, builtins and variables, for wrappers.py.

Deny rules name programs, so every string a program or builtin runs as a command must be
found: `script -qc 'touch f'`, `su -lc ...`, `flock --command=...`, `trap 'touch f'
EXIT`, `alias t=touch`, `compgen -C 'touch f' x`, `mapfile -C 'touch f' < list`. What
cannot be read here makes the command opaque: a glob in the program name
(`/usr/bin/tou[c]h` runs whatever the pattern matches on disk), variables bash runs or
reads as code (`PS4='$(cmd)' bash -x`, `PROMPT_COMMAND`, `BASH_ENV`, an exported function
`BASH_FUNC_ls%%`, `PATH`), an alias definition (later words change meaning), `hash -p`,
`enable -f` (a builtin from a shared library), `fc` (re-runs history through an editor)
and GNU parallel (runs its command through a shell).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lsp_server.policy.commands.options import abbreviates

Words = Sequence[str]

# Programs that run the value of an option as a shell command: (the letter, the other
# letters that take a value, the long names).
COMMAND_OPTIONS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "su": ("c", "gGsw", ("--command", "--session-command")),
    "runuser": ("c", "gGsuw", ("--command", "--session-command")),
    "script": ("c", "EIOBTmo", ("--command",)),
    "flock": ("c", "wE", ("--command",)),
    # bash builtins: `compgen -C CMD` runs CMD, `mapfile -C CMD` calls CMD every -c lines.
    "compgen": ("C", "oAGWFXPS", ()),
    "complete": ("C", "oAGWFXPS", ()),
    "mapfile": ("C", "dnOsuc", ()),
    "readarray": ("C", "dnOsuc", ()),
    "nix-shell": ("", "pIAE", ("--run", "--command")),
}
# Variables whose value bash (or a shell it starts) runs, expands as a prompt with
# substitutions, sources, or searches for programs.
_CODE_VARIABLE = re.compile(
    r"(PS[0-4]|PROMPT_COMMAND|BASH_ENV|SHELLOPTS|BASHOPTS|PATH|BASH_FUNC_.*|"
    r"LD_PRELOAD|LD_LIBRARY_PATH|LD_AUDIT)(\[.*\])?\+?=.*",
    re.DOTALL,
)
_ASSIGNING = frozenset(("env", "export", "declare", "typeset", "local", "readonly"))
_GLOB = re.compile(r"[*?\[]")


def option_values(args: Words, letter: str, valued: str, longs: tuple[str, ...]) -> list[str]:
    """The values of `-LETTER V` in `args` the way getopt reads them: bundled (`-qc V`,
    `-qcV`) or long (`--command V`, `--command=V`, an accepted prefix `--comm=V`)."""
    found: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if arg == "--":
            break
        if arg.startswith("--"):
            if any(abbreviates(arg, option) for option in longs):
                if "=" in arg:
                    found.append(arg.split("=", 1)[1])
                elif index < len(args):
                    found.append(args[index])
                    index += 1
            continue
        if not arg.startswith("-") or len(arg) < 2:
            continue
        for position, char in enumerate(arg[1:], start=1):
            if char == letter or char in valued:
                value = arg[position + 1 :]
                if not value and index < len(args):
                    value = args[index]
                    index += 1
                if char == letter:
                    found.append(value)
                break
    return found


def command_option_scripts(head: str, args: Words) -> list[str]:
    """`su -lc CMD`, `script --command=CMD`, `flock f -c CMD`: the CMD strings."""
    spec = COMMAND_OPTIONS.get(head)
    if spec is None:
        return []
    letter, valued, longs = spec
    return option_values(args, letter, valued, longs)


def sg_command(args: Words) -> str | None:
    """`sg GROUP 'cmd'`, `sg - GROUP -c 'cmd'`: sg hands the command string to /bin/sh."""
    rest = [a for a in args if a not in ("-", "-c")]
    return rest[1] if len(rest) >= 2 else None


def trap_action(args: Words) -> str | None:
    """`trap 'touch f' EXIT`: the action (bash runs it as a command at the signal)."""
    rest = [a for a in args if a not in ("-p", "-l", "-P")]
    if rest[:1] == ["--"]:
        rest = rest[1:]
    if len(rest) >= 2 and rest[0] != "-":
        return rest[0]
    return None


def alias_values(args: Words) -> list[str]:
    """`alias t=touch x='ls -l'`: the text each alias stands for."""
    return [a.split("=", 1)[1] for a in args if "=" in a and not a.startswith("-")]


def builtin_reason(head: str, args: Words) -> str | None:
    """Why this builtin or program runs code its words do not show, or None."""
    if head == "alias" and alias_values(args):
        return "an alias definition changes what later words run"
    if head == "hash" and any(a.startswith("-") and "p" in a for a in args):
        return "hash -p makes a name run another program"
    if head == "enable" and any(a.startswith("-") and "f" in a for a in args):
        return "enable -f loads a builtin from a shared library"
    if head == "fc":
        return "fc runs commands from the history through an editor"
    if head in ("parallel", "sem"):
        return f"{head} runs its command through a shell"
    return _tool_shell_reason(head, args)


# Programs with a command language of their own that can start a shell: `tmux new 'cmd'`,
# `screen -X stuff`, `gdb -ex '!cmd'`, `vim -c '!cmd'`, `less +'!cmd'`, sqlite3's
# `.system`/`.shell`.
_EDITORS = frozenset(("vi", "vim", "nvim", "ex", "view", "gvim", "vimdiff"))
_GDB_CODE = frozenset(("-ex", "--ex", "-iex", "--iex", "-eval-command", "--eval-command"))


def _tool_shell_reason(head: str, args: Words) -> str | None:
    if head == "tmux":
        return "tmux runs commands in its sessions"
    if head == "screen" and any(a.startswith("-") and "X" in a for a in args):
        return "screen -X sends commands to a session"
    if head in ("gdb", "lldb") and any(a.split("=", 1)[0] in _GDB_CODE for a in args):
        return f"{head} runs the commands given with -ex"
    if head in _EDITORS and any(a in ("-c", "--cmd", "-S") or a[:1] == "+" for a in args):
        return f"{head} runs the editor commands given on its command line"
    if head in ("less", "more") and any(a[:1] == "+" and "!" in a for a in args):
        return f"{head} +'!cmd' runs a shell command"
    if head.startswith("sqlite") and any(re.match(r"\s*\.(sh|system)", a) for a in args):
        return f"{head}'s .system and .shell commands run programs"
    return None


def code_assignment(form: Words) -> str | None:
    """A `NAME=value` (before the command, or given to env/export/declare ...) for a
    variable that runs or finds code: `PS4='$(cmd)' bash -x ...`, `env BASH_FUNC_ls%%=...`."""
    if not form:
        return None
    words = form if form[0] in _ASSIGNING else form[:1]
    for word in words:
        if _CODE_VARIABLE.fullmatch(word):
            return f"{word.split('=', 1)[0]}= makes bash run or look up code by it"
    return None


def patterned_program(form: Words, patterned: Sequence[str]) -> str | None:
    """`/usr/bin/tou[c]h f`, `touc? f`: a program name bash expands as a pattern against
    the files there, so what runs is only known when it runs."""
    if form and form[0] in patterned and _GLOB.search(form[0]):
        return f"the program name {form[0]!r} is a pattern bash expands against the files"
    return None
