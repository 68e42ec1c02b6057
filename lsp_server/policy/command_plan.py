"""One plan per shell command, made once (issue 27): what the classifier says the command
does, where it runs, whether it asks by default and whether it is checkpointed.

The policy (the approval), the bash tool (the sandbox it starts) and the checkpoints (the
snapshots around it) all read this one object; nothing classifies a command a second
time. `policy/planner.py` builds it; the classifier (`policy/readonly_commands.py`,
`policy/commands/`) fills its `reading`.

The sandbox enforces, the classifier only guesses: a command the classifier calls a plain
read runs in the read-only sandbox (a wrong guess cannot write), readOnly mode runs every
command there, everything else runs workspace-write and is checkpointed. Only where no
sandbox runs does the classifier decide alone, and there what is not a plain read asks.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from lsp_server.sandbox import SandboxPlan

if TYPE_CHECKING:  # the parse itself (tree-sitter) loads with the first shell call only
    from lsp_server.policy.commands.wrappers import CommandView
    from lsp_server.shellparse.segments import ParsedCommand


@attrs.frozen
class CommandReading:
    """The classifier's verdict on one command line."""

    plain_read: bool
    """Every part of it only reads (the classifier's guess; the sandbox enforces it)."""
    concern: str | None = None
    """Why it is not a plain read (None when it is one), for approvals and refusals."""
    opaque: bool = False
    """It runs code its words do not show (substitutions, eval, interpreters with -c)."""
    reads_only: bool = False
    """Its programs only read (plain_read also needs what they read to be unremarkable:
    no secret, nothing outside the workspace): it runs in the read-only sandbox."""
    place_concern: str | None = None
    """What some part of it reads that needs a person's eye (a secret, a file outside the
    workspace, a repository git config that runs programs): the sandbox does not stop
    reads, so such a command asks even where the sandbox contains it."""


@attrs.frozen
class CommandPlan:
    command: str
    cwd: Path | None
    """The folder it runs in (None when not known: a preview without a session)."""
    parsed: ParsedCommand
    """The command line split once (simple commands, redirections, what is opaque)."""
    view: CommandView
    """Every simple command it runs, inline scripts included, for deny and ask rules."""
    reading: CommandReading
    sandbox: SandboxPlan
    """How it runs: the sandbox mode it gets (read-only for plain reads and in readOnly
    mode), the network, or no sandbox at all."""
    read_only_mode: bool = False
    """The policy mode is readOnly."""

    @property
    def plain_read(self) -> bool:
        return self.reading.plain_read

    @property
    def runs_read_only(self) -> bool:
        """Nothing on disk but a private /tmp is writable while it runs."""
        return self.sandbox.sandboxed and self.sandbox.mode == "read-only"

    @property
    def classifier_alone(self) -> bool:
        """No sandbox stands behind the classifier's guess (sandbox off or unavailable, or
        the call asked to run outside it)."""
        return not self.sandbox.sandboxed

    @property
    def needs_checkpoint(self) -> bool:
        """Whatever can change the workspace is checkpointed: every command that does not
        run in the read-only sandbox, plain reads outside the sandbox included (a wrong
        guess can then be undone)."""
        return not self.runs_read_only

    @property
    def needs_approval(self) -> bool:
        """The default before rules: asks when it wants more than the sandbox gives
        (network, or outside it), or when nothing contains it and it is not a plain read."""
        if self.sandbox.escalation is not None:
            return True
        if self.sandbox.contained:
            return False
        return not self.plain_read
