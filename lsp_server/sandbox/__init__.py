"""The shell sandbox: what a command may touch, decided before it runs (docs/SANDBOX.md).

Pure parts: `plan` (how one command runs, from the configured mode, what the platform can
do and what the call asked for), `bubblewrap` (the Linux argv), `platforms` (a row per
platform). `service` probes once per server and hands the shell a `Launcher`.
"""

from lsp_server.sandbox.plan import (
    SANDBOX_MODES,
    SANDBOX_REQUESTS,
    SandboxMode,
    SandboxPlan,
    SandboxRequest,
    plan_command,
    stricter_mode,
)

__all__ = [
    "SANDBOX_MODES",
    "SANDBOX_REQUESTS",
    "SandboxMode",
    "SandboxPlan",
    "SandboxRequest",
    "plan_command",
    "stricter_mode",
]
