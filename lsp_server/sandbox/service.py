"""The server's sandbox: probed once (per PATH), planned per command, and the one-time
notice that tells an agent session when commands cannot be sandboxed here."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path

from lsp_server.sandbox.bubblewrap import BubblewrapLayout
from lsp_server.sandbox.hidden import HiddenCredentials
from lsp_server.sandbox.lifetime import Supervised
from lsp_server.sandbox.placeholders import PlaceholderHolds
from lsp_server.sandbox.plan import SandboxMode, SandboxPlan, SandboxRequest, plan_command
from lsp_server.sandbox.platforms import BackendFound, find_backend
from lsp_server.sandbox.protected import ProtectedPaths
from lsp_server.sandbox.under_tmp import TMP, folders_under_tmp


class SandboxService:
    """One instance per server. Blocking only in `backend()` (the first call runs bwrap)."""

    def __init__(self, own_folders: Sequence[Path] = (), shared: Sequence[Path] = ()) -> None:
        self.own_folders = tuple(own_folders)
        """toolhost's state and config folders: read-only to commands where a root holds
        them (a home folder the user allowed as a root)."""
        self.shared = tuple(f for f in shared if f.is_relative_to(TMP))
        """Folders of the server that commands reach (the askpass broker's socket and
        helpers): bound read-only over the private /tmp when they live under /tmp."""
        self._found: dict[str | None, BackendFound] = {}
        self._lock = threading.Lock()
        self._told: set[str] = set()
        # Shared by every command of this server (the locks themselves are per command).
        self._holds = PlaceholderHolds()
        self._hidden = HiddenCredentials()

    def backend(self) -> BackendFound:
        path = os.environ.get("PATH")
        with self._lock:
            found = self._found.get(path)
            if found is None:
                found = self._found[path] = find_backend(path)
            return found

    def plan(
        self,
        mode: SandboxMode,
        requested: SandboxRequest = "default",
        network: bool = False,
        *,
        proxy: bool = False,
    ) -> SandboxPlan:
        """`network`: the user's configuration lets sandboxed commands reach the network;
        `proxy`: without it, the command reaches sandbox_network_allow through a proxy."""
        problem = None if mode == "off" else self.backend().problem
        return plan_command(mode, problem, requested, network, proxy)

    def launcher(
        self,
        plan: SandboxPlan,
        roots: Sequence[Path],
        protected: ProtectedPaths,
        proxy_socket: Path | None = None,
        hide: Sequence[str] = (),
    ) -> BubblewrapLayout | Supervised:
        """How to start a command under `plan`: confined when sandboxed; approved to run
        outside, still in a PID namespace that dies with the server; without bwrap (or with
        the sandbox off) under the supervisor, which keeps every process it starts findable
        and ends them with it or with the server. `hide`: `shell.sandbox_hide`, beside the
        user's credential files (hidden.py) that a sandboxed command never sees."""
        executable = self.backend().executable if plan.mode != "off" else None
        if executable is None:
            return Supervised()
        return BubblewrapLayout(
            bwrap=executable,
            roots=tuple(roots),
            writable=plan.mode == "workspace-write",
            protected=protected,
            read_only_within=tuple(
                f for f in self.own_folders if any(r == f or r in f.parents for r in roots)
            ),
            network=plan.network,
            confined=plan.sandboxed,
            proxy_socket=proxy_socket if plan.sandboxed and not plan.network else None,
            hidden=self._hidden.find(roots, hide) if plan.sandboxed else (),
            holds=self._holds,
            under_tmp=(*folders_under_tmp(), *self.shared),
        )

    def notice(self, session: str, plan: SandboxPlan) -> str | None:
        """Once per session: a line saying that commands run without a sandbox, and why."""
        if plan.sandboxed or plan.requested == "off" or session in self._told:
            return None
        self._told.add(session)
        return f"[{plan.describe()}]"
