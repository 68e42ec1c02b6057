"""The read-only shell command classifier: which command lines are plain reads.

Where a sandbox runs, this is a guess the sandbox backs (a plain read runs in the
read-only sandbox, so a wrong guess cannot write); where none can start, it decides
alone, so it fails closed. A command line is a plain read when it is not opaque (nothing
bash evaluates that its words do not show: substitutions, arithmetic, `${x@P}`,
here-documents ...; policy/commands/bash_split.py), and every simple command in it

- redirects output to no file (`2>&1` and `/dev/null` are fine),
- has only literal words (no `$X`, `${X}`: their value is only known when it runs),
- starts with a bare program name (no `./x`, `/tmp/x`, no `VAR=value` prefix),
- has a read-only shape: its program is in the allow list and every option and argument
  it uses is one that program's list names (policy/commands/read_programs.py,
  git_reads.py: an allow list, never a list of hazards);

or is covered by one of the configured extra read-only specs (`policy.read_only_commands`,
written like bash rule specs: `"make -n"`, `"cargo tree:*"`). With the workspace's places,
a read of a secret or of anything outside the workspace is not a plain read either, nor
is a git command in a repository whose config names programs (git_guard.py).
Anything else is not a read: the policy then asks.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from lsp_server.policy.commands.command_paths import Places, read_concern
from lsp_server.policy.commands.git_guard import GitConfigGuard
from lsp_server.policy.commands.read_programs import read_shape_concern
from lsp_server.policy.rules import Rule, RuleError, parse_rule
from lsp_server.shellparse.segments import ParsedCommand, Segment


class ReadOnlyClassifier:
    """Decides whether a parsed command line only reads. Configurable with extra specs.

    With `places` (the workspace roots and secret patterns) and the folder the command runs
    in, a read of a secret file or of anything outside the workspace is not a plain read,
    nor is a git command in a repository whose config names programs (git_guard.py)."""

    def __init__(
        self,
        extra_specs: Iterable[str] = (),
        problems: list[str] | None = None,
        places: Places | None = None,
    ) -> None:
        self.places = places
        self.git_guard = GitConfigGuard()
        self.extra: list[Rule] = []
        for spec in extra_specs:
            try:
                self.extra.append(parse_rule(f"bash({spec})"))
            except RuleError as exc:
                if problems is not None:
                    problems.append(f"policy.read_only_commands: {exc}; entry ignored")

    def segment_is_read(self, segment: Segment, cwd: Path | None = None) -> bool:
        return self.segment_concern(segment, cwd) is None

    def shape_concern(self, segment: Segment) -> str | None:
        """Why this simple command's shape is not a read (its program, options, words,
        redirections), whatever files it names; None when it is a read-only shape."""
        if not segment.words:
            return "an empty command" if not segment.redirects else "a group's redirection"
        if segment.writes_files:
            return "it redirects output into a file"
        if segment.expanding:
            word = segment.words[min(segment.expanding)]
            return f"the word {word!r} is only known when the command runs"
        if any(rule.matches_segment(segment) for rule in self.extra):
            return None
        program = segment.words[0]
        if "/" in program or "=" in program:
            return f"{program} is not a known read-only program"
        return read_shape_concern(segment.words)

    def segment_concern(self, segment: Segment, cwd: Path | None = None) -> str | None:
        """Why this simple command is not a plain read; None when it is one."""
        return self.shape_concern(segment) or self.segment_place_concern(segment, cwd)

    def segment_place_concern(self, segment: Segment, cwd: Path | None) -> str | None:
        """What this simple command reads that needs a person's eye (a secret, a file
        outside the workspace), or a git config that names programs; None otherwise."""
        if self.places is None or cwd is None:
            return None
        concern = read_concern(segment, cwd, self.places)
        if concern is None and segment.words[:1] == ("git",):
            concern = self.git_guard.concern(cwd, segment.words[1:])
        return concern

    def concern(self, parsed: ParsedCommand, cwd: Path | None = None) -> str | None:
        """Why the command line is not a plain read; None when every part only reads."""
        if parsed.opaque:
            return f"it runs code its words do not show ({parsed.reasons[0]})"
        if not parsed.segments:
            return "an empty command"
        for segment in parsed.segments:
            concern = self.segment_concern(segment, cwd)
            if concern is not None:
                return concern
        return None

    def place_concern(self, parsed: ParsedCommand, cwd: Path | None) -> str | None:
        """Why a command of read-only programs is still not a plain read (what it reads,
        or the repository's git config); None otherwise. For the approval prompt."""
        for segment in parsed.segments:
            if self.shape_concern(segment) is None:
                concern = self.segment_place_concern(segment, cwd)
                if concern is not None:
                    return concern
        return None

    def is_read(self, parsed: ParsedCommand, cwd: Path | None = None) -> bool:
        return self.concern(parsed, cwd) is None
