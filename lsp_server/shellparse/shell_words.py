"""A shell command line as simple commands ("segments"): what rules and the classifier see.

Policy rules match one simple command at a time, so a chain like `git status && rm -rf x`
must never look like `git status` to a rule. `split_command` reads the line with the bash
grammar (bash_split.py): each segment holds the words bash would pass (quotes, escapes,
`$'...'` decoded), its redirections apart (so a rule can refuse a command that writes a
file), which words bash computes (`expanding`) or expands against the file system
(`patterned`). Anything that runs code the words do not show makes the line `opaque`:
rules and the read-only classifier never approve an opaque command. Commands found inside
substitutions are still returned (as `nested` segments) so that deny rules see them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lsp_server.shellparse.segments import ParsedCommand


def split_command(command: str) -> ParsedCommand:
    """Segments of a command line; see the module docstring for what counts as opaque."""
    from lsp_server.shellparse.bash_split import split_command as split

    return split(command)


def split_words(text: str) -> tuple[str, ...] | None:
    """The words of one simple command (for rule specs); None when it is not one."""
    parsed = split_command(text)
    if parsed.opaque or len(parsed.segments) != 1 or parsed.segments[0].redirects:
        return None
    return parsed.segments[0].words
