"""A denied program's name handed to a program toolhost does not know (guards.py).

`valgrind touch f` is unfolded (wrapper_table.py), but no table knows every wrapper:
`mywrapper --x touch f` or `make touch` may run `touch` as well, so under a deny rule on
`touch` such a command asks. Known read-only programs and name lookups do not count.
"""

from __future__ import annotations

from lsp_server.policy.commands.read_programs import CHECKS, SHAPES
from lsp_server.policy.commands.wrappers import Words, command_forms, program_name

# Programs that take a program's name as an argument without running it.
_NAME_ONLY = frozenset(
    ("command", "type", "which", "whereis", "hash", "help", "man", "info", "apropos", "whatis")
)


def names_program_unseen(words: Words, program: str) -> bool:
    """Whether a program toolhost does not know is given `program` as a word (`valgrind
    touch f`, `mywrapper --x touch f`): it may run it. Known read-only programs and name
    lookups (`grep touch f`, `which touch`) do not count."""
    for form in command_forms(words):
        head = program_name(form[0])
        if head in SHAPES or head in CHECKS or head in _NAME_ONLY or head == program:
            continue
        if any(w == program or w.endswith("/" + program) for w in form[1:]):
            return True
    return False
