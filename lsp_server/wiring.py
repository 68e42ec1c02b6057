"""The long-lived services a runtime needs, installed the same way by the server and the
CLI: background jobs, the symbol index, the language servers."""

from __future__ import annotations

import asyncio
import atexit
from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from lsp_server import index_wiring
from lsp_server.langservers import service as language_servers
from lsp_server.policy.readonly_commands import ReadOnlyClassifier
from lsp_server.policy.shell_words import split_command
from lsp_server.runtime.checkpoints import Checkpoints
from lsp_server.runtime.dispatch import Runtime
from lsp_server.shell.jobs import JobManager

ShutdownHook = Callable[[], Awaitable[None]]
StatusProvider = Callable[[], Any]


@attrs.define
class Lifecycle:
    """What the owner must run at the end, and what toolhost/status reports."""

    shutdown_hooks: list[ShutdownHook] = attrs.Factory(list)
    # Synchronous last resorts (signals, interpreter exit): no orphaned processes.
    kill_hooks: list[Callable[[], None]] = attrs.Factory(list)
    status_providers: dict[str, StatusProvider] = attrs.Factory(dict)

    async def shutdown(self) -> None:
        for hook in self.shutdown_hooks:
            await hook()


def install_services(runtime: Runtime, lifecycle: Lifecycle, *, long_lived: bool = True) -> None:
    """`long_lived=False` (one `toolhost call`): no background index build, which would die
    with the process; code_index then parses only what a query needs."""
    jobs = JobManager(runtime.config.shell.max_background_jobs)
    runtime.services.register(JobManager, jobs)
    lifecycle.shutdown_hooks.append(jobs.shutdown)
    lifecycle.status_providers["jobs"] = jobs.status
    lifecycle.kill_hooks.append(jobs.kill_all_now)
    atexit.register(jobs.kill_all_now)

    if long_lived:
        index_service = index_wiring.install(runtime)
        lifecycle.status_providers["index"] = index_service.status
        lifecycle.shutdown_hooks.append(lambda: asyncio.to_thread(index_service.close))

    install_checkpoints(runtime, lifecycle)
    language_servers.install(
        runtime.services, runtime.config.lsp, lifecycle.shutdown_hooks, lifecycle.status_providers
    )


def install_checkpoints(runtime: Runtime, lifecycle: Lifecycle) -> Checkpoints:
    """Checkpoints of writers and of shell commands the policy's classifier does not call
    plain reads (docs/CHECKPOINTS.md)."""
    classifier = ReadOnlyClassifier(runtime.config.policy.read_only_commands)
    checkpoints = Checkpoints(
        runtime.workspace,
        runtime.config.checkpoints,
        runtime.state_dir,
        is_read_only=lambda command: classifier.is_read(split_command(command)),
        documents=runtime.documents,
    )
    runtime.services.register(Checkpoints, checkpoints)
    # After the jobs' hook: a killed job's changes are recorded before trimming settles.
    lifecycle.shutdown_hooks.append(checkpoints.settle)
    return checkpoints
