"""The canonical tool contract: entries, registry, canonical JSON, fingerprints, hashes."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import attrs

if TYPE_CHECKING:
    from lsp_server.config.tree import Config
    from lsp_server.core.tool_output import ToolOutput, WritePlan
    from lsp_server.runtime.context import ToolContext

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

Surface = Literal["core", "full", "minimal"]
SURFACES: tuple[Surface, ...] = ("core", "full", "minimal")

# What a tool does to the workspace; the policy groups (Read, Edit, Bash) follow it.
ToolKind = Literal["read", "edit", "shell", "state"]

# A face with a tool of its own (ContractEntry.face).
Face = Literal["acp"]


@attrs.frozen
class PathArg:
    """A top-level argument that names a path; dispatch resolves and confines it.

    `access="write"` paths are locked for the call and must pass Edit rules.
    `must_exist=False` lets a missing path through (write_file creating a file).
    `absolute=True`: a relative path is refused (the minimal surface speaks absolute paths).
    """

    name: str
    access: Literal["read", "write"] = "read"
    must_exist: bool = True
    default: str | None = None
    absolute: bool = False


@attrs.frozen
class Hints:
    """What an MCP client may show or decide by (MCP tool annotations), true to the MCP
    definitions; tests/runtime/test_hints_hold.py calls every tool the way its hints claim.

    The environment the hints speak of is the workspace (its files, the commands and jobs
    run in it): a tool that changes only toolhost's own record of the session is read-only.
    readOnly comes from the entry itself, unless the tool runs other tools (delegates)."""

    destructive: bool = False
    """It can remove or overwrite what exists (a file's text, a running job, anything a
    command does). False means MCP's "only additive updates". Read-only tools are never
    destructive."""
    idempotent: bool = False
    """A second call with the same arguments succeeds and changes nothing more."""
    open_world: bool = False
    """It reaches beyond the workspace (the network, any program)."""
    changes_state: bool = False
    """It changes the session's own state (its todo list, goal, presented files) and nothing
    of the workspace: read-only all the same, but a repeat is not implied to be harmless
    (a goal's stale revision is refused), so it is idempotent only when it says so."""
    delegates: bool = False
    """It runs other tools (use_capability), each asked for as itself: policy asks nothing
    for the call itself, but it can change whatever they change, so it is labelled as a
    writer everywhere."""


@attrs.frozen
class ContractEntry:
    name: str
    read_only: bool
    description: str
    schema: Mapping[str, Any]
    kind: ToolKind = "read"
    path_args: tuple[PathArg, ...] = ()
    # Minimal-surface adapters share names with full tools (grep, bash): they
    # live in their own namespace.
    minimal: bool = False
    core: bool = False
    """On the provider-visible default surface. Everything else stays reachable through
    use_capability, so the core list (and its hash) never changes mid-session."""
    approval_verb: str | None = None
    """How an approval prompt names the action ("Edit src/a.py"); default: the tool name."""
    hints: Hints = Hints()
    face: Face | None = None
    """Offered by this face alone, for its own requests (`acp`: the reader behind ACP's
    fs/read_text_file): only that face's runtimes hold it, and the generated contract,
    which lists what every face offers, does not."""

    @property
    def labelled_read_only(self) -> bool:
        """What every face labels read-only: `toolhost tools`, the editors' tool lists, the
        VS Code contributions, MCP's readOnlyHint. The workspace is left as it was. It
        differs from `read_only` (policy asks nothing for the call itself) only for a tool
        that runs other tools."""
        return self.read_only and not self.hints.delegates

    def annotations(self) -> dict[str, bool]:
        """MCP tool annotations, from this entry alone."""
        read_only = self.labelled_read_only
        return {
            "readOnlyHint": read_only,
            "destructiveHint": self.hints.destructive and not read_only,
            "idempotentHint": self.hints.idempotent or (read_only and not self.hints.changes_state),
            "openWorldHint": self.hints.open_world,
        }

    # Computed once per entry: dispatch looks the validator up by fingerprint on every call.
    @functools.cached_property
    def canonical_schema(self) -> str:
        return canonical_json(self.schema)

    @functools.cached_property
    def fingerprint(self) -> str:
        return hashlib.sha256(self.canonical_schema.encode()).hexdigest()

    def public(self) -> dict[str, Any]:
        """The entry as listed by toolhost/tools and schemas/tools.json."""
        return {
            "name": self.name,
            "readOnly": self.labelled_read_only,
            "description": self.description,
            "inputSchema": json.loads(self.canonical_schema),
            "core": self.core,
            "annotations": self.annotations(),
        }


RunResult = "ToolOutput | WritePlan"
RunFunction = Callable[["ToolContext", dict[str, Any]], Awaitable["ToolOutput | WritePlan"]]


@attrs.frozen
class ShellLaunch:
    """How a shell tool would run a call, for the approval prompt and the preview."""

    background: bool
    timeout_ms: int | None
    """None for a background job (it runs until it ends or is killed)."""


ShellPlanner = Callable[["Config", Mapping[str, Any]], ShellLaunch]


@attrs.frozen
class JudgedCommand:
    """A call that amounts to a shell command (text typed into a shell or interpreter): the
    policy judges it as a bash call with these arguments, run in the background in `cwd`."""

    tool: ContractEntry
    """The shell tool whose rules apply (bash)."""
    arguments: dict[str, Any]
    """Its arguments: command, sandbox, description."""
    cwd: Path


CommandJudge = Callable[["ToolContext", dict[str, Any]], Awaitable[JudgedCommand | None]]


@attrs.frozen
class Tool:
    contract: ContractEntry
    run: RunFunction
    shell_launch: ShellPlanner | None = None
    judge: CommandJudge | None = None
    """The shell command a call amounts to, approved after the call's own approval."""

    @property
    def name(self) -> str:
        return self.contract.name


def canonical_json(value: Any) -> str:
    """Sorted keys, 2-space indent, UTF-8 kept, trailing newline."""
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def surface_hash(entries: Iterable[ContractEntry]) -> str:
    """sha256 over the ordered (name, readOnly, description, fingerprint) list."""
    ordered = sorted(entries, key=lambda e: e.name)
    rows = [[e.name, e.read_only, e.description, e.fingerprint] for e in ordered]
    return hashlib.sha256(canonical_json(rows).encode()).hexdigest()


class Registry:
    """All tools, by surface. Built once from the literal tuple in lsp_server.tools.registry."""

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._standard: dict[str, Tool] = {}
        self._minimal: dict[str, Tool] = {}
        for tool in tools:
            table = self._minimal if tool.contract.minimal else self._standard
            if tool.name in table:
                raise ValueError(f"tool {tool.name!r} registered twice")
            table[tool.name] = tool
        self.core_names = tuple(sorted(n for n, t in self._standard.items() if t.contract.core))

    def surface(self, surface: Surface) -> list[Tool]:
        if surface == "minimal":
            tools = list(self._minimal.values())
        elif surface == "core":
            tools = [self._standard[name] for name in self.core_names]
        else:
            tools = list(self._standard.values())
        return sorted(tools, key=lambda t: t.name)

    def get(self, name: str, surface: Surface = "full") -> Tool | None:
        """Any standard tool is callable on core and full; minimal has its own names."""
        if surface == "minimal":
            return self._minimal.get(name)
        return self._standard.get(name)

    def names(self, surface: Surface = "full") -> list[str]:
        return [tool.name for tool in self.surface(surface)]

    def hash(self, surface: Surface) -> str:
        return surface_hash(tool.contract for tool in self.surface(surface))

    def all_tools(self) -> list[Tool]:
        return sorted([*self._standard.values(), *self._minimal.values()], key=lambda t: t.name)
