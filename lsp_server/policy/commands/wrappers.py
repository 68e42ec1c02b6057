"""What a simple command really runs, for deny and ask rules.

`nice -n 5 touch f`, `timeout -s KILL 5 touch f`, `env -u X touch f`, `/usr/bin/touch f`,
`echo f | xargs touch`, `find . -exec touch {} ;` and `bash -c 'exec -a x touch f'` all run
`touch`. `command_forms()` peels such wrappers (with each one's own options, so `-n 5` and
`-s KILL 5` are skipped as values, not taken for the command) and adds the program's bare
name when it is written as a path. `inline_scripts()` finds command text that a program
runs itself (`bash -c`, `env -S`, `watch`, `su -c`), which is split and checked in turn.

`opaque_reason()` says when a command runs code that no rule can read: an interpreter
given code inline (`python -c`, `node -e`, `perl -e` ...) or on stdin (`... | sh`),
`eval`, `source`, a program name bash computes (`$cmd f`), or an xargs replace string
in the command position. Such commands are never approved by an allow rule, and when a
deny rule exists they ask even in bypass mode (see guards.py).
"""

from __future__ import annotations

import re

import attrs

from lsp_server.policy.commands.git_guard import program_key
from lsp_server.policy.commands.inline_code import (
    alias_values,
    builtin_reason,
    code_assignment,
    command_option_scripts,
    patterned_program,
    sg_command,
    trap_action,
)
from lsp_server.policy.commands.options import abbreviates, long_name
from lsp_server.policy.commands.wrapper_table import SHELLS, WRAPPERS, Wrapper
from lsp_server.shellparse.segments import ParsedCommand, Segment
from lsp_server.shellparse.shell_words import split_command, split_words

Words = tuple[str, ...]


# Reserved words bash reads before a command (`if touch f; then ...`, `! touch f`).
KEYWORDS = frozenset(("!", "{", "}", "if", "then", "else", "elif", "do", "while", "until"))
_INTERPRETER = re.compile(
    r"(python|pypy|pythonw)[0-9.]*|node|nodejs|perl[0-9.]*|ruby[0-9.]*|php[0-9.]*|lua[0-9.]*"
    r"|luajit|Rscript|deno|bun|pwsh|powershell|osascript|tclsh[0-9.]*|julia|groovy|expect|wish"
)
# Options that take code: python -c, node -e/-p/--eval/--print, perl -e/-E, php -r ...
_INLINE_CODE_SHORT = frozenset("ceEpr")
_INLINE_CODE_LONG = ("--eval", "--print", "--command", "--code")
_AWK = frozenset(("awk", "gawk", "mawk", "nawk"))


def program_name(word: str) -> str:
    """`/usr/bin/touch` -> `touch`: a deny rule names the program wherever it lives."""
    return word.rsplit("/", 1)[-1] if "/" in word else word


def _skip_options(words: Words, wrapper: Wrapper) -> Words | None:
    """The words after the wrapper's options, values and positionals; None when none."""
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--":
            index += 1
            break
        if wrapper.assignments and "=" in word and not word.startswith(("-", "=")):
            index += 1
        elif word.startswith("--"):
            name = long_name(word) or ""
            takes = any(option[2:].startswith(name) for option in wrapper.valued_long)
            index += 2 if takes and "=" not in word else 1
        elif word.startswith("-") and len(word) > 1:
            letters = word[1:]
            if wrapper.numeric_flags and letters.lstrip("-").isdigit():
                index += 1
                continue
            index += 1
            for position, letter in enumerate(letters):
                if letter in wrapper.valued:
                    index += 1 if position == len(letters) - 1 else 0
                    break
        else:
            break
    index += wrapper.positionals
    return words[index:] if index < len(words) else None


def _split_string(words: Words) -> Words | None:
    """`env -S 'touch f'`, `env -u X -vS'touch f'`, `env --split-string=...`: the string is
    the command (the words after it are its arguments)."""
    index = 0
    while index < len(words):
        word = words[index]
        if not word.startswith("-") or word == "--":
            return None
        value: str | None = None
        if word.startswith("--"):
            if abbreviates(word, "--split-string"):
                value = word.split("=", 1)[1] if "=" in word else None
                value = value if value is not None else _word_at(words, index + 1)
                index += 0 if "=" in word else 1
        else:
            letters = word[1:]
            cut = next((i for i, c in enumerate(letters) if c in "uCS"), None)
            if cut is not None and letters[cut] == "S":
                value = letters[cut + 1 :] or _word_at(words, index + 1)
                index += 0 if letters[cut + 1 :] else 1
        if value is not None:
            inner = split_words(value) if value else None
            return (*inner, *words[index + 1 :]) if inner else None
        index += 1 + _value_words(word)
    return None


def _word_at(words: Words, index: int) -> str:
    return words[index] if index < len(words) else ""


def _value_words(word: str) -> int:
    """How many of the words after env's option `word` are its value (0 or 1)."""
    if word.startswith("--"):
        name = long_name(word) or ""
        takes = any(o[2:].startswith(name) for o in WRAPPERS["env"].valued_long)
        return 1 if takes and "=" not in word else 0
    for position, letter in enumerate(word[1:], start=1):
        if letter in "uC":
            return 1 if position == len(word) - 1 else 0
    return 0


def _unwrap_once(words: Words) -> Words | None:
    head = program_name(words[0])
    rest = words[1:]
    if head in KEYWORDS:
        return rest
    if "=" in words[0] and not words[0].startswith("="):
        return rest  # VAR=value before the command
    if head == "find":
        return _find_exec(rest)
    if head == "git":
        return _git_without_globals(rest)
    if head == "command" and any(a in ("-v", "-V") for a in rest[:2]):
        return None  # `command -v touch` only looks the name up
    if head == "coproc" and len(rest) > 2 and rest[1] == "{":
        return rest[2:]  # `coproc NAME { touch f; }`
    wrapper = WRAPPERS.get(head)
    if wrapper is None:
        return None
    if head == "env":
        split = _split_string(rest)
        if split is not None:
            return split
    return _skip_options(rest, wrapper)


# git's options before the subcommand: those followed by a value word.
_GIT_VALUED = frozenset(("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"))


def _git_without_globals(args: Words) -> Words | None:
    """`git -C x -c k=v --no-pager push` -> `git push`, so `bash(git push:*)` holds."""
    index = 0
    while index < len(args) and args[index].startswith("-"):
        index += 2 if args[index] in _GIT_VALUED else 1
    return ("git", *args[index:]) if 0 < index < len(args) else None


def _git_sets_a_program(args: Words) -> str | None:
    """`git -c alias.x='!touch f' x`, `git -c core.pager=sh log`, `git -c protocol.ext.allow=
    always ...` (an `ext::` remote runs a command), `git --config-env=core.pager=VAR log`: a
    program chosen inline."""
    index = 0
    while index < len(args) and args[index].startswith("-"):
        arg = args[index]
        if arg.startswith("--config-env"):
            return "git --config-env sets configuration from the environment"
        if arg == "-c" and index + 1 < len(args):
            setting = args[index + 1]
        elif arg.startswith("-c") and arg != "-c":
            setting = arg[2:]
        else:
            index += 2 if arg in _GIT_VALUED else 1
            continue
        key, _, value = setting.partition("=")
        key = key.lower()
        if key.startswith(("alias.", "protocol.")) or program_key(key, value):
            return f"git -c {key} chooses a program to run"
        index += 2 if arg == "-c" else 1
    return None


def _find_exec(args: Words) -> Words | None:
    """`find . -exec touch {} ;`: the command after -exec/-execdir/-ok/-okdir."""
    for index, word in enumerate(args):
        if word in ("-exec", "-execdir", "-ok", "-okdir"):
            body = args[index + 1 :]
            for end, part in enumerate(body):
                if part in (";", "+"):
                    body = body[:end]
                    break
            return body or None
    return None


def command_forms(words: Words) -> list[Words]:
    """`words` and every command it runs behind wrappers, each also with its bare program
    name: what deny and ask rules compare with."""
    forms: list[Words] = []
    current: Words | None = words
    while current and len(forms) < 32:
        forms.append(current)
        if "/" in current[0]:
            forms.append((program_name(current[0]), *current[1:]))
        current = _unwrap_once(current)
    return forms


def _shell_body(args: Words) -> str | None:
    """`bash -lc BODY`, `sh -c BODY`: the BODY; None without -c."""
    inline = False
    index = 0
    while index < len(args):
        word = args[index]
        if word in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            index += 2
            continue
        if word.startswith(("-", "+")) and not word.startswith("--"):
            inline = inline or "c" in word[1:]
        elif not word.startswith("--"):
            return word if inline else None
        index += 1
    return None


def inline_scripts(words: Words) -> list[str]:
    """Command text that this simple command hands to a shell."""
    head, args = program_name(words[0]), words[1:]
    if head in SHELLS:
        body = _shell_body(args)
        return [body] if body is not None else []
    scripts = command_option_scripts(head, args)
    if scripts:
        return scripts
    if head == "trap":
        action = trap_action(args)
        return [action] if action else []
    if head == "sg":
        line = sg_command(args)
        return [line] if line else []
    if head == "alias":
        return alias_values(args)
    if head == "watch":
        # -d takes its value only attached (`--differences=permanent`).
        wrapper = Wrapper(valued="nq", valued_long=("--interval", "--equexit"))
        command = _skip_options(args, wrapper)
        return [" ".join(command)] if command else []
    if head == "eval":
        return [" ".join(args)]
    if head == "sudo" and _sudo_shell(args):
        # `sudo -s 'touch f'`, `sudo -i CMD`: the words are handed to a shell as one line.
        command = _skip_options(args, WRAPPERS["sudo"])
        return [" ".join(command)] if command else []
    return []


def _sudo_shell(args: Words) -> bool:
    """sudo's options (before the command) include -s/--shell or -i/--login."""
    command = _skip_options(args, WRAPPERS["sudo"]) or ()
    options = args[: len(args) - len(command)]
    return any(
        o in ("--shell", "--login")
        or (o[:1] == "-" and o[1:2] != "-" and bool(set(o[1:]) & set("si")))
        for o in options
    )


def _reads_stdin_as_code(head: str, args: Words) -> bool:
    """`sh`, `bash -s`, `python`, `python -`: the code comes from stdin."""
    positional = [a for a in args if not a.startswith("-")]
    return not positional or positional[0] == "-" or (head in SHELLS and "-s" in args)


def _interpreter_reason(head: str, args: Words) -> str | None:
    for arg in args:
        if arg == "--":
            break
        name = long_name(arg)
        if name is not None:
            if any(option[2:].startswith(name) for option in _INLINE_CODE_LONG):
                return f"{head} {arg} runs code given on the command line"
        elif arg.startswith("-") and _INLINE_CODE_SHORT & set(arg[1:]):
            return f"{head} {arg} runs code given on the command line"
        elif not arg.startswith("-"):
            return None  # a script file: the program is the rule's business
    return f"{head} reads the code to run from its input" if head != "deno" else None


def opaque_reason(segment: Segment) -> str | None:
    """Why this simple command runs code that its words do not show, or None."""
    words = segment.words
    patterned = [words[i] for i in segment.patterned if i < len(words)]
    for form in command_forms(words):
        head, args = program_name(form[0]), form[1:]
        if "$" in form[0] or "`" in form[0]:
            return f"the program name {form[0]!r} is computed when the command runs"
        reason = (
            patterned_program(form, patterned)
            or code_assignment(form)
            or builtin_reason(head, args)
        )
        if reason is not None:
            return reason
        if head in ("eval", "source", "."):
            return f"{head} runs code that is only known when the command runs"
        if head in SHELLS and _shell_body(args) is None and _reads_stdin_as_code(head, args):
            return f"{head} reads the commands to run from its input"
        if _INTERPRETER.fullmatch(head):
            reason = _interpreter_reason(head, args)
            if reason is not None:
                return reason
        if head in _AWK and any("system" in a or "|" in a or "getline" in a for a in args):
            return f"the {head} program can run commands"
        if head == "xargs" and _xargs_replaces_command(args):
            return "xargs builds the program name from its input"
        if head == "git" and (reason := _git_sets_a_program(args)) is not None:
            return reason
    return None


def _xargs_replaces_command(args: Words) -> bool:
    wrapper = WRAPPERS["xargs"]
    rest = _skip_options(args, wrapper)
    if not rest:
        return False  # xargs runs echo
    replace = "{}" if any(a == "-i" or a.startswith("--replace") for a in args) else None
    for index, arg in enumerate(args):
        if arg == "-I" and index + 1 < len(args):
            replace = args[index + 1]
        elif arg.startswith("-I") and len(arg) > 2:
            replace = arg[2:]
        elif arg.startswith("--replace="):
            replace = arg.split("=", 1)[1]
    if replace is None:
        return False
    # `xargs -I{} {} f`, and `xargs -I{} sh -c {}`: the input is the program or the code.
    code = [script for form in command_forms(rest) for script in inline_scripts(form)]
    return replace in rest[0] or any(replace in script for script in code)


def _here_string_code(form: Words, segment: Segment) -> list[str]:
    """`bash <<< 'cmd'`: a shell reading its commands from a here-string runs that text
    (still opaque: its input could come from elsewhere too)."""
    if program_name(form[0]) not in SHELLS or _shell_body(form[1:]) is not None:
        return []
    return [r.target for r in segment.redirects if r.operator.endswith("<<<") and r.target]


@attrs.frozen
class CommandView:
    """A command line as rules see it: every simple command it runs, inline scripts
    included, and why any of it is opaque."""

    segments: tuple[Segment, ...]
    opaque: tuple[str, ...]


def view_command(parsed: ParsedCommand, text: str | None = None) -> CommandView:
    """Segments of `parsed` (the split of `text`, by the bash grammar) and, recursively, of
    the scripts they run inline (bounded: a script nested 16 deep is cut there and counts
    as opaque)."""
    del text  # the split already holds all the grammar saw
    found: list[Segment] = []
    reasons = list(parsed.reasons)
    pending = [(segment, 0) for segment in parsed.segments]
    while pending:
        segment, depth = pending.pop()
        found.append(segment)
        if not segment.words:
            continue
        reason = opaque_reason(segment)
        if reason is not None:
            reasons.append(reason)
        for form in command_forms(segment.words):
            for script in [*inline_scripts(form), *_here_string_code(form, segment)]:
                if depth >= 16:
                    reasons.append("inline scripts nested too deep")
                    continue
                inner = split_command(script)
                reasons.extend(inner.reasons)
                pending.extend((s, depth + 1) for s in inner.segments)
    return CommandView(tuple(found), tuple(dict.fromkeys(reasons)))
