"""The planner: one CommandPlan per shell call, computed once and shared by the policy (the
approval), the bash tool (the sandbox it starts) and the checkpoints (command_plan.py).

compose.py installs one per runtime. The plan of a call is kept under its call id until
the tool has taken it, so the approval and the run see the very same object.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from lsp_server.config.tree import Config
from lsp_server.policy.command_plan import CommandPlan, CommandReading
from lsp_server.sandbox import SANDBOX_REQUESTS, SandboxMode, SandboxRequest
from lsp_server.sandbox.service import SandboxService
from lsp_server.shellparse.segments import Segment
from lsp_server.shellparse.shell_words import split_command

if TYPE_CHECKING:
    from lsp_server.policy.readonly_commands import ReadOnlyClassifier

_NET = ("/dev/tcp/", "/dev/udp/")
_KEPT = 256  # plans of calls approved but not yet run (bounded: a call may never run)


def requested_sandbox(arguments: Mapping[str, Any]) -> SandboxRequest:
    value = arguments.get("sandbox", "default")
    return value if value in SANDBOX_REQUESTS else "default"


class CommandPlanner:
    def __init__(
        self,
        config: Config,
        sandbox: SandboxService,
        classifier: Callable[[], ReadOnlyClassifier],
    ) -> None:
        """`config`: the runtime's own (policy changes land in it); `classifier`: the
        policy engine's current one (rebuilt when the policy is reconfigured)."""
        self.config = config
        self.sandbox = sandbox
        self.classifier = classifier
        self._kept: collections.OrderedDict[tuple[str, str, str], CommandPlan] = (
            collections.OrderedDict()
        )
        self._lock = threading.Lock()

    def plan(
        self,
        command: str,
        cwd: Path | None,
        arguments: Mapping[str, Any],
        call_id: str | None = None,
    ) -> CommandPlan:
        """The call's plan: the one made for it already (by its approval), else a new one."""
        key = (call_id or "", command, requested_sandbox(arguments))
        if call_id is not None:
            with self._lock:
                known = self._kept.get(key)
            if known is not None and known.cwd in (cwd, None):
                return known
        plan = self._make(command, cwd, arguments)
        if call_id is not None:
            with self._lock:
                self._kept[key] = plan
                while len(self._kept) > _KEPT:
                    self._kept.popitem(last=False)
        return plan

    def forget(self, call_id: str) -> None:
        """The call has run: its plan need not be kept."""
        with self._lock:
            for key in [k for k in self._kept if k[0] == call_id]:
                del self._kept[key]

    def _make(self, command: str, cwd: Path | None, arguments: Mapping[str, Any]) -> CommandPlan:
        # The parse (tree-sitter) loads with the first shell call, never at start-up.
        from lsp_server.policy.commands.wrappers import view_command

        parsed = split_command(command)
        view = view_command(parsed, command)
        classifier = self.classifier()
        # What its programs do: only read? That decides the sandbox it gets.
        concern = view.opaque[0] if view.opaque else classifier.concern(parsed, None)
        reads_only = concern is None
        shell = self.config.shell
        read_only_mode = self.config.policy.mode == "readOnly"
        requested = requested_sandbox(arguments)
        mode: SandboxMode = shell.sandbox
        if mode != "off" and requested == "default" and (read_only_mode or reads_only):
            mode = "read-only"
        network_configured = shell.sandbox_network and not read_only_mode
        # The proxy lets what may write reach sandbox_network_allow; plain reads and
        # readOnly mode get no network at all, and with nothing listed there is no proxy
        # (its forwarder costs a Python start per command: bench/sandbox_proxy.py).
        proxy = not read_only_mode and not reads_only and bool(shell.sandbox_network_allow)
        sandbox = self.sandbox.plan(mode, requested, network_configured, proxy=proxy)
        # Then what it reads (a secret, a file outside the workspace, a repository config
        # that runs programs): asked about even where the sandbox contains the command.
        place = _place_concern(classifier, view.segments, cwd, sandbox.network)
        reading = CommandReading(
            plain_read=reads_only and place is None,
            concern=concern or place,
            opaque=parsed.opaque or bool(view.opaque),
            reads_only=reads_only,
            place_concern=place,
        )
        return CommandPlan(
            command, cwd, parsed, view, reading, sandbox, read_only_mode=read_only_mode
        )


def _place_concern(
    classifier: ReadOnlyClassifier, segments: Sequence[Segment], cwd: Path | None, network: bool
) -> str | None:
    if cwd is None:
        return None
    for segment in segments:
        if not segment.words:
            continue
        if not network:
            # bash's /dev/tcp and /dev/udp are the network, which the sandbox cuts off.
            kept = tuple(r for r in segment.redirects if not r.target.startswith(_NET))
            segment = attrs.evolve(segment, redirects=kept)
        concern = classifier.segment_place_concern(segment, cwd)
        if concern is not None:
            return concern
    return None
