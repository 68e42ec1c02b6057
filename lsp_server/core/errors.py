"""Errors as values: every refusal is a ToolError with a stable code and a recovery hint."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

# Stable error codes (docs/ERRORS.md lists each with its meaning and a test).
SCHEMA_MISMATCH = "schema_mismatch"
UNKNOWN_TOOL = "unknown_tool"
PERMISSION_USER_DENIED = "permission.user_denied"
PERMISSION_RULE_DENIED = "permission.rule_denied"
PERMISSION_UNATTENDED = "permission.unattended"
PERMISSION_UNREADABLE_ANSWER = "permission.unreadable_answer"
PERMISSION_FORM_NOT_SHOWN = "permission.form_not_shown"
OUTSIDE_SCOPE = "workspace.outside_scope"
SECRET_FILE = "workspace.secret_file"
BROAD_ROOT = "workspace.broad_root"  # lsp_server/config/broad_roots.py
NOT_ISOLATED = "workspace.not_isolated"  # workspace:apply (tools/session/workspace_apply.py)
ISOLATION_BROKEN = "workspace.isolation_broken"
ISOLATION_FAILED = "workspace.isolation_failed"  # toolhost acp --isolate: session/new
FS_NOT_OBSERVED = "FS_NOT_OBSERVED"
FS_STALE_VERSION = "FS_STALE_VERSION"
FS_EDIT_CONFLICT = "FS_EDIT_CONFLICT"
FS_NOT_FOUND = "FS_NOT_FOUND"
FS_ALREADY_EXISTS = "FS_ALREADY_EXISTS"
FS_IS_DIRECTORY = "FS_IS_DIRECTORY"
FS_BINARY = "FS_BINARY"
FS_TOO_LARGE = "FS_TOO_LARGE"
FS_NOT_A_FILE = "FS_NOT_A_FILE"
EDIT_NOT_FOUND = "edit.not_found"
EDIT_NOT_UNIQUE = "edit.not_unique"
EDIT_NO_CHANGE = "edit.no_change"
EDIT_INVALID = "edit.invalid"
EDIT_UNENCODABLE = "edit.unencodable"
SECRET_PLACEHOLDER = "edit.secret_placeholder"
FS_PERMISSION = "FS_PERMISSION"
INVALID_ARGUMENT = "invalid_argument"
TIMEOUT = "timeout"
CANCELLED = "cancelled"
EDITOR_REFUSED = "editor.refused"
LSP_UNAVAILABLE = "lsp.unavailable"
LSP_NOT_READY = "lsp.not_ready"
LSP_CRASHED = "lsp.crashed"
JOB_NOT_FOUND = "job.not_found"
JOB_LIMIT = "job.limit"
CHECKPOINT_UNKNOWN = "checkpoint.unknown"
SHELL_NEEDS_TERMINAL = "shell.needs_terminal"
SHELL_SECRET_CANCELLED = "shell.secret_cancelled"
SHELL_SECRET_UNAVAILABLE = "shell.secret_unavailable"
LSP_REQUEST_FAILED = "lsp.request_failed"
INTERNAL_ERROR = "internal_error"
GREP_INVALID_REGEX = "grep.invalid_regex"
IMAGE_UNSUPPORTED = "image.unsupported"
IMAGE_TOO_LARGE = "image.too_large"
WEB_INVALID_URL = "web.invalid_url"
WEB_BLOCKED_ADDRESS = "web.blocked_address"
WEB_FETCH_FAILED = "web.fetch_failed"
WEB_HTTP_STATUS = "web.http_status"
GOAL_CONFLICT = "goal.revision_conflict"
GOAL_EXISTS = "goal.unfinished_exists"
GOAL_NOT_FOUND = "goal.not_found"
RESULT_NOT_FOUND = "result.not_found"
SERVER_NOT_INITIALIZED = "server.not_initialized"
ATTACH_LOST = "attach.lost"
ATTACH_UNAVAILABLE = "attach.unavailable"
ACP_AGENT_EXITED = "acp.agent_exited"


class ToolError(Exception):
    """A refusal or failure that goes back to the model as a result, never a crash.

    `cause` says what happened, `recovery` what the model can do about it.
    `details` carries structured extras (violations, candidates) for `error`.
    """

    def __init__(
        self,
        code: str,
        cause: str,
        recovery: str,
        *,
        details: dict[str, Any] | None = None,
        partial_text: str | None = None,
    ) -> None:
        super().__init__(f"{code}: {cause}; {recovery}")
        self.code = code
        self.cause = cause
        self.recovery = recovery
        self.details = details or {}
        # Output produced before the failure (a timed-out command's output).
        self.partial_text = partial_text
        # Real paths a nested call (use_capability) had resolved before it failed.
        self.paths: list[Path] = []

    @property
    def message(self) -> str:
        return f"{self.code}: {self.cause}; {self.recovery}"


_OS_ERRORS: dict[int, tuple[str, str, str]] = {
    errno.ELOOP: (
        INVALID_ARGUMENT,
        "is a loop of symbolic links",
        "use a path that is not a link loop (ls shows links as `name -> target`)",
    ),
    errno.ENOENT: (FS_NOT_FOUND, "does not exist", "check the path (ls or glob can help)"),
    errno.ENOTDIR: (FS_NOT_FOUND, "has a file where a folder is expected", "check the path"),
    errno.ENAMETOOLONG: (INVALID_ARGUMENT, "has a name too long", "use a shorter path"),
    errno.EACCES: (
        FS_PERMISSION,
        "cannot be accessed (permission denied)",
        "check its permissions",
    ),
    errno.EPERM: (FS_PERMISSION, "cannot be accessed (operation not permitted)", "check it"),
    errno.EROFS: (FS_PERMISSION, "is on a read-only file system", "write somewhere else"),
    errno.EISDIR: (FS_IS_DIRECTORY, "is a directory", "use ls to list it, then name a file"),
}


def from_os_error(exc: OSError, shown: Any) -> ToolError | None:
    """The ToolError for an OSError a path given by the model caused (a link loop, a name
    that vanished between check and use), or None when it is not one of those (a bug).
    `shown(path)` turns an absolute path into what the model should read."""
    entry = _OS_ERRORS.get(exc.errno or 0)
    if entry is None:
        return None
    code, what, recovery = entry
    name = shown(Path(os.fsdecode(exc.filename))) if exc.filename else "the path"
    return ToolError(code, f"{name} {what}", recovery)
