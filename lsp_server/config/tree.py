"""One attrs tree of settings with defaults and docstrings.

Keys are snake_case in TOML and accepted in camelCase on the wire. Unknown or invalid keys
are reported (the server shows them with window/showMessage) and the default is used; the
server never refuses to start over configuration.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal, get_args

import attrs


@attrs.define
class Limits:
    max_output_chars: int = 30_000
    """Characters of text a result shows before the head/tail snip."""
    max_line_chars: int = 2_000
    """A longer line is cut with a visible marker."""
    read_default_lines: int = 2_000
    """Lines read_file returns when no limit is given."""
    max_file_bytes: int = 16 * 1024 * 1024
    """Files larger than this are refused by readers and writers (FS_TOO_LARGE)."""
    hash_limit_bytes: int = 64 * 1024 * 1024
    """Up to this size a file version includes the sha256 of its bytes."""
    stored_results: int = 64
    """Full results kept per session for paging (oldest evicted first)."""
    call_timeout_seconds: float = 900.0
    """Hard bound on any one call at the dispatch boundary."""


@attrs.define
class PolicyConfig:
    mode: Literal["default", "acceptEdits", "readOnly", "bypass"] = "default"
    """default | acceptEdits | readOnly | bypass (deny rules always win)."""
    allow: list[str] = attrs.Factory(list)
    """Rules that allow a call without asking, e.g. "bash(git status)", "Edit(docs/**)"."""
    ask: list[str] = attrs.Factory(list)
    """Rules that always ask."""
    deny: list[str] = attrs.Factory(list)
    """Rules that always refuse."""
    unattended: Literal["deny", "allow"] = "deny"
    """What "ask" becomes when no client can be asked."""
    approval_timeout_seconds: float = 300.0
    """No answer within this time counts as deny."""
    trusted_roots: list[str] = attrs.Factory(list)
    """Workspace roots whose .toolhost.toml may loosen policy (user config only)."""
    read_only_commands: list[str] = attrs.Factory(list)
    """Extra shell commands the classifier treats as plain reads."""


@attrs.define
class WorkspaceConfig:
    extra_roots: list[str] = attrs.Factory(list)
    """More folders that tools may read and write."""
    readable_roots: list[str] = attrs.Factory(list)
    """Folders outside the roots that readers may read."""
    secret_patterns: list[str] = attrs.Factory(list)
    """More gitignore-style patterns of secret files readers refuse."""
    allowed_secrets: list[str] = attrs.Factory(list)
    """Secret-looking paths (gitignore-style) that readers may read anyway."""
    protected_paths: list[str] = attrs.Factory(list)
    """More gitignore-style paths of files that make other programs run code, added to the
    built-in list (.git, .toolhost.toml, .vscode/, .envrc ...: docs/SANDBOX.md): read-only
    in the sandbox whether or not they exist, and a tool or unsandboxed command that writes
    one always asks. Tightens: any layer may add; none can remove a built-in one."""
    allow_broad_roots: bool = False
    """Let a home folder, `/`, a folder above home or a system folder (/usr, /etc, /tmp ...)
    be a workspace root. Off, such a root is refused before anything reads it (open a
    project folder instead). Loosens policy: read from the user config file and the managed
    file only, never from a workspace or editor setting (docs/MCP.md)."""


@attrs.define
class ShellConfig:
    default_timeout_ms: int = 120_000
    max_timeout_ms: int = 600_000
    kill_grace_seconds: float = 2.0
    """Between SIGTERM and SIGKILL of a process group."""
    pipe_wait_seconds: float = 2.0
    """After the main process exits, how long grandchildren may hold the pipes."""
    capture_bytes: int = 8 * 1024 * 1024
    """Output kept per command (head and tail); the rest is counted, not stored."""
    kill_daemons: bool = True
    """Kill leftover group members even when the command plainly daemonised."""
    max_background_jobs: int = 16
    """Background jobs that may run at once; bash refuses more (job.limit)."""
    minimal_timeout_ms: int = 60_000
    """Timeout of the minimal surface's bash, which has no timeout argument."""
    sandbox: Literal["workspace-write", "read-only", "off"] = "workspace-write"
    """Where commands run (docs/SANDBOX.md): workspace-write (only the workspace and a
    private /tmp are writable, no network; such commands run without asking), read-only,
    or off (no sandbox: every command that is not a plain read asks)."""
    sandbox_network: bool = False
    """Let sandboxed commands reach the whole network without asking."""
    sandbox_network_allow: list[str] = attrs.Factory(list)
    """Hosts sandboxed commands reach through toolhost's proxy without asking: "host",
    "host:port", "*.domain", IP literals (docs/SANDBOX.md). Empty: none."""
    sandbox_read_only: list[str] = attrs.Factory(list)
    """Older name of workspace.protected_paths (both apply, added to the built-in list)."""
    sandbox_hide: list[str] = attrs.Factory(list)
    """More files and folders outside the workspace that sandboxed commands never see
    (absolute, or `~/...`), beside the built-in credential files (~/.aws, ~/.ssh, ~/.netrc,
    ~/.git-credentials ...: docs/SANDBOX.md): an empty read-only file or folder is mounted
    over each that exists. Tightens: any layer may add; none can remove a built-in one."""
    env_pass: list[str] = attrs.Factory(list)
    """Credentials of the server's environment that commands still get, by name or glob
    (e.g. ["OPENAI_API_KEY"]); their values are still hidden from the model's results.
    Loosens policy: read from user-level settings only (docs/SHELL.md)."""
    env_drop: list[str] = attrs.Factory(list)
    """More names (globs, any case) of variables commands never get, and whose values are
    hidden from results, beside the built-in credential names (docs/SHELL.md)."""


@attrs.define
class SearchConfig:
    engine: Literal["auto", "ripgrep", "python"] = "auto"
    """auto uses ripgrep when it can be found, else the pure-Python engine."""
    max_results: int = 200


@attrs.define
class LspConfig:
    provider: Literal["auto", "spawn", "editor"] = "auto"
    """Who answers lsp_* questions. auto: the editor's own language servers when the client
    declared lspProxy (toolhost/lspRequest), toolhost's own when the editor has none, fails
    or is too slow; editor: only the editor's (never start a server); spawn: only toolhost's."""
    editor_timeout_seconds: float = 30.0
    """Bound on the editor's answer to toolhost/lspRequest (then toolhost's own server, in
    auto). Generous: an editor whose language support is still starting takes seconds, and
    starting toolhost's own copy instead takes longer still."""
    servers: dict[str, list[str]] = attrs.Factory(dict)
    """Command per language, e.g. {python = ["pyright-langserver", "--stdio"]}."""
    project_servers: bool = False
    """Whether the project's own servers (.venv/bin, node_modules/.bin) may run. Set by
    toolhost, not by a config file: true only for a trusted workspace outside readOnly
    mode, so that opening an untrusted clone never runs its code."""
    idle_seconds: float = 600.0
    """A language server unused this long is stopped (started again on the next call)."""
    document_idle_seconds: float = 120.0
    """A document no call touched this long is closed (didClose) on its server."""
    start_timeout_seconds: float = 60.0
    """Bound on a server's answer to initialize (a server that does not answer counts as
    crashed)."""
    ready_timeout_seconds: float = 30.0
    """Bound on waiting for a server to finish indexing (then lsp.not_ready)."""
    request_timeout_seconds: float = 30.0
    """Bound on one request to a language server."""
    diagnostics_settle_seconds: float = 0.3
    """After pushed diagnostics for the current version arrive, wait this long for more."""
    restart_backoff_seconds: float = 0.5
    """Pause before restarting a crashed server (times the number of crashes)."""


@attrs.define
class EditsConfig:
    via: Literal["auto", "disk", "editor"] = "auto"
    """auto: files open in the editor are read from its buffers and edited through
    workspace/applyEdit when the client declared applyEdit; editor: always so; disk: buffers
    are ignored (reads and writes use the disk)."""
    editor_timeout_seconds: float = 10.0
    """How long to wait for the editor to apply an edit, report the new text, or save."""


@attrs.define
class WebConfig:
    allow_loopback: bool = False
    """Let web_fetch reach 127.0.0.1/::1 (tests do)."""
    timeout_seconds: float = 15.0
    max_bytes: int = 1024 * 1024


REGENERABLE_FOLDERS = (
    "node_modules", "bower_components", ".venv", "venv", ".tox", ".nox", "__pycache__",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis", ".eggs", "target",
    "build", "dist", ".gradle", ".next", ".nuxt", ".turbo", ".parcel-cache", ".cache",
    "coverage", ".terraform",
)  # fmt: skip


@attrs.define
class CheckpointsConfig:
    enabled: bool = True
    """Record what each writer and each non-read-only bash command changes, so that
    toolhost/revert can undo it (docs/CHECKPOINTS.md)."""
    max_age_days: float = 7.0
    """Checkpoints older than this are dropped."""
    max_checkpoints: int = 500
    """Checkpoints kept per workspace root (oldest dropped first)."""
    budget_mb: int = 512
    """Size budget of a root's shadow repository; over it, the oldest checkpoints go."""
    max_file_bytes: int = 8 * 1024 * 1024
    """Larger files are recorded by size and hash only (a revert cannot restore them)."""
    ignored_budget_mb: int = 64
    """Files the workspace's .gitignore names are recorded too, smallest first, up to this
    many MB in all; the rest are named in the result when a command changes them."""
    skip_folders: list[str] = attrs.Factory(lambda: list(REGENERABLE_FOLDERS))
    """Ignored folders never recorded: dependencies, builds and caches a tool regenerates;
    where no git index measures the root (outside git), never recorded, ignored or not."""
    seed_from_git: bool = True
    """In a git work tree, the first snapshot starts from the repository's own index and
    borrows its objects (read only), so it hashes only what differs, as `git status` does."""
    max_root_files: int = 300_000
    """A root with more files (regenerable folders, .git and other mounts not counted) gets
    no shell checkpoints; said once in a result and in toolhost/status."""
    max_root_mb: int = 4096
    """The same for the root's bytes (outside git, also at most budget_mb: every byte would
    go into the state folder)."""
    measure_seconds: float = 10.0
    """A root not measured within this time counts as over the budget."""
    exact_attribution: bool = True
    """Where the kernel names the process behind each change (toolhost running with
    CAP_SYS_ADMIN and CAP_NET_ADMIN, e.g. as root), a shell command's checkpoint holds
    what its own processes changed, and, marked (its revert asks), changes no writer is
    named for; elsewhere, and with this off, other writers' changes are told apart by
    origin (docs/AGENTS.md)."""
    watch_share: float = 0.1
    """The share of fs.inotify.max_user_watches toolhost's watchers may hold; a root that
    needs more is watched through fanotify: one mark for its filesystem where the process
    may (root), else a mark per folder (Linux 5.13+), else not watched (each snapshot scans
    it instead)."""
    mark_share: float = 0.5
    """The share of fs.fanotify.max_user_marks the folder marks may hold (a pool of the
    user's that editors and language servers, which use inotify, do not draw on)."""


@attrs.define
class McpConfig:
    approvals: Literal["auto", "client"] = "auto"
    """Who approves the calls of `toolhost mcp`: auto (the attached editor, else the MCP
    client's form, else policy alone) | client (the MCP client's own permission step is the
    approval; `toolhost mcp --approvals client` does the same for one server)."""


@attrs.define
class AcpConfig:
    mcp_server: bool = True
    """`toolhost acp` adds toolhost's MCP server to each ACP session's `mcpServers`, so the
    agent also has code_index, lsp_*, grep and checkpoints (docs/ACP.md); `--no-mcp` turns
    it off for one run."""


@attrs.define
class SessionsConfig:
    isolated: list[str] = attrs.Factory(list)
    """Editor sessions (by the id their toolhost/call names: VS Code's agent mode calls as
    `vscode-lm`) that each work in a git worktree of the live tree, HEAD plus everyone's
    uncommitted changes, until the agent brings its change back with use_capability
    `workspace:apply` (docs/AGENTS.md). `*`: every session. Every layer adds to it (none can
    take a session out), the workspace file too; MCP and ACP agents use `toolhost mcp
    --isolate` / `toolhost acp --isolate`."""


@attrs.define
class Config:
    limits: Limits = attrs.Factory(Limits)
    policy: PolicyConfig = attrs.Factory(PolicyConfig)
    workspace: WorkspaceConfig = attrs.Factory(WorkspaceConfig)
    shell: ShellConfig = attrs.Factory(ShellConfig)
    search: SearchConfig = attrs.Factory(SearchConfig)
    lsp: LspConfig = attrs.Factory(LspConfig)
    edits: EditsConfig = attrs.Factory(EditsConfig)
    web: WebConfig = attrs.Factory(WebConfig)
    checkpoints: CheckpointsConfig = attrs.Factory(CheckpointsConfig)
    mcp: McpConfig = attrs.Factory(McpConfig)
    acp: AcpConfig = attrs.Factory(AcpConfig)
    sessions: SessionsConfig = attrs.Factory(SessionsConfig)


_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def snake_case(key: str) -> str:
    return _CAMEL.sub("_", key).lower()


def _check_value(value: Any, annotation: Any) -> Any:
    """Return the value when it fits the annotation, else raise ValueError."""
    text = str(annotation)
    if text == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError("expected an integer")
        return value
    if text == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError("expected a number")
        return float(value)
    if text == "bool":
        if not isinstance(value, bool):
            raise ValueError("expected true or false")
        return value
    if text == "str":
        if not isinstance(value, str):
            raise ValueError("expected a string")
        return value
    if text.startswith("list[str]"):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError("expected a list of strings")
        return list(value)
    if text.startswith("dict[str, list[str]]"):
        if not isinstance(value, dict) or not all(
            isinstance(v, list) and all(isinstance(x, str) for x in v) for v in value.values()
        ):
            raise ValueError("expected a table of command lists")
        return {str(k): list(v) for k, v in value.items()}
    if text.startswith("Literal["):
        choices = get_args(_literal_of(text))
        if value not in choices:
            raise ValueError("expected one of " + ", ".join(repr(c) for c in choices))
        return value
    raise ValueError(f"unsupported setting type {text}")


def _literal_of(text: str) -> Any:
    # Annotations are strings here (from __future__); evaluate the Literal safely.
    return eval(text, {"Literal": Literal})


# Sections that configure an editor client, not the server (the VS Code extension's
# toolhost.trace.server and toolhost.server.path/python): sent along with the rest of the
# `toolhost` settings, and ignored here without a warning.
CLIENT_SECTIONS = frozenset({"trace", "server"})


def structure_config(
    data: Mapping[str, Any], problems: list[str], base: Config | None = None
) -> Config:
    """Build a Config from plain data over `base`; each bad key becomes a problem."""
    config = base if base is not None else Config()
    for raw_section, section_value in data.items():
        section = snake_case(raw_section)
        if section in CLIENT_SECTIONS:
            continue
        if section not in attrs.fields_dict(Config):
            problems.append(f"unknown setting section {raw_section!r}")
            continue
        if not isinstance(section_value, Mapping):
            problems.append(f"setting {raw_section!r} should be a table")
            continue
        target = getattr(config, section)
        fields = attrs.fields_dict(type(target))
        for raw_key, value in section_value.items():
            key = snake_case(raw_key)
            field = fields.get(key)
            if field is None:
                problems.append(f"unknown setting {raw_section}.{raw_key}")
                continue
            try:
                setattr(target, key, _check_value(value, field.type))
            except ValueError as exc:
                problems.append(f"invalid setting {raw_section}.{raw_key}: {exc}; default kept")
    return config
