"""Configuration layers, merged with a clear precedence (docs/POLICY.md).

Precedence (highest first): the managed file (`/etc/toolhost/managed.toml`, config/managed.py)
> initializationOptions `toolhost` > workspace/configuration section `toolhost` > the
`.toolhost.toml` at the workspace root > the user file `$XDG_CONFIG_HOME/toolhost/config.toml`
> defaults. A command-line flag (`toolhost mcp --approvals`) comes just below the managed file.

- Scalar settings: the highest layer that sets a key wins; a key the managed file sets is
  locked (a lower layer's different value is ignored with a notice).
- Rule lists (`policy.allow`, `policy.ask`, `policy.deny`) and the lists that only hide or
  protect more (`workspace.secret_patterns`, `workspace.protected_paths`, `shell.env_drop`,
  `sessions.isolated`) accumulate over all layers, so no layer can drop another layer's entry.
- `trusted_roots` ("project code may run here") is honoured from the user's own layers only.
- The workspace file loosens only when the user approved its exact content
  (config/workspace_file.py); until then only its tightening entries apply, and its
  stricter sandbox settings win over every other layer (but a managed lock).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import attrs

from lsp_server.config.managed import ACCUMULATED, ManagedLayer, managed_path_from, read_managed
from lsp_server.config.tree import Config, ShellConfig, structure_config
from lsp_server.config.trust import TrustStore
from lsp_server.config.workspace_file import (
    WORKSPACE_CONFIG_NAME,
    WorkspaceFile,
    normalise,
    read_workspace_file,
    sandbox_tightening,
)
from lsp_server.home.dirs import Dirs
from lsp_server.sandbox import stricter_mode

__all__ = ["WORKSPACE_CONFIG_NAME", "LoadedConfig", "load_config", "load_layers", "read_toml"]

RULE_LISTS = ("allow", "ask", "deny")
_Value = TypeVar("_Value")
_SECTIONS = frozenset(attrs.fields_dict(Config))
# Keys of the initializationOptions `toolhost` object that are not settings.
CLIENT_ONLY_KEYS = frozenset(("workspaceTrusted", "token"))
# Always listed in policySources (the rest only when some layer sets them).
POLICY_KEYS = (
    "policy.mode",
    "policy.allow",
    "policy.ask",
    "policy.deny",
    "policy.unattended",
    "policy.trusted_roots",
    "policy.read_only_commands",
    "shell.sandbox",
    "shell.sandbox_network",
    "shell.sandbox_network_allow",
    "mcp.approvals",
    "workspace.extra_roots",
    "workspace.readable_roots",
    "workspace.secret_patterns",
    "lsp.servers",
)


@attrs.define
class Layer:
    label: str
    """Who set a value, for policySources: "user file ~/.config/toolhost/config.toml"."""
    where: str
    """The prefix of its problems and notices (a path, or the client's message name)."""
    data: dict[str, Any]
    user_level: bool
    """Written by the user or the administrator (trusted_roots counts only from these)."""


@attrs.define
class LoadedConfig:
    config: Config
    problems: list[str] = attrs.Factory(list)
    """Invalid entries (shown with window/showMessage, defaults kept)."""
    notices: list[str] = attrs.Factory(list)
    """Entries ignored: an unapproved workspace file's loosening ones, a managed lock's."""
    sources: list[str] = attrs.Factory(list)
    """The layers read, highest precedence first (for toolhost/status)."""
    rule_origins: dict[str, str] = attrs.Factory(dict)
    """`list:rule` -> the layer that contributed it."""
    policy_sources: dict[str, str] = attrs.Factory(dict)
    """`section.key` -> the layer that set its value ("default" when none did)."""
    workspace_trusted: bool = False
    """The client or the user's trusted_roots trust the root: project code may run."""
    workspace_files: list[WorkspaceFile] = attrs.Factory(list)
    managed: ManagedLayer | None = None
    face_notice: str | None = None
    """The face's own line for each session's first result (`toolhost mcp --isolate`)."""

    @property
    def startup_notice(self) -> str | None:
        """What each session's first result says (build_runtime's `notice`): the managed
        file failed closed; the face's own line."""
        failed = None
        if self.managed is not None and self.managed.state == "invalid":
            failed = f"toolhost: {self.managed.message}."
        lines = [line for line in (failed, self.face_notice) if line]
        return "\n".join(lines) or None

    def command_line(self, key: str, value: _Value | None, flag: str) -> _Value | None:
        """A command-line flag's value for setting `key` (None: the config's value applies):
        the managed file's lock beats it."""
        if value is None:
            return None
        why = self.managed.overrides(key, value) if self.managed else None
        if why:
            self.notices.append(f"command line {flag} ignored: {why}")
            return None
        self.policy_sources[key] = f"command line {flag}"
        return value

    def may_answer_yes(self, flag: str) -> bool:
        """Whether a flag that approves every ask (`toolhost call --yes`) may apply."""
        why = self.managed.may_answer_yes() if self.managed else None
        if why:
            self.notices.append(f"command line {flag} ignored: {why}")
        return why is None


def read_toml(path: Path, problems: list[str]) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{path}: cannot read ({exc}); ignored")
        return None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        problems.append(f"{path}: invalid TOML ({exc}); ignored")
        return None


def _root_is_listed(root: Path, listed: Sequence[str]) -> bool:
    for entry in listed:
        try:
            if Path(entry).expanduser().resolve() == root.resolve():
                return True
        except (OSError, RuntimeError):
            continue
    return False


def _screened(layer: Layer, managed: ManagedLayer, notices: list[str]) -> dict[str, Any]:
    """The layer without what the managed file locks or forbids."""
    kept: dict[str, Any] = {}
    for section, table in layer.data.items():
        if not isinstance(table, Mapping):
            kept[section] = table
            continue
        kept_table = {}
        for key, value in table.items():
            why = managed.overrides(f"{section}.{key}", value)
            if why is None:
                kept_table[key] = value
            elif why:
                notices.append(f"{layer.where}: {section}.{key} = {value!r} ignored: {why}")
        kept[section] = kept_table
    return kept


class _Merge:
    """Applies layers lowest first onto one Config, remembering who set what."""

    def __init__(self, loaded: LoadedConfig) -> None:
        self.loaded = loaded
        self.config = Config()
        self.rules: dict[str, list[str]] = {name: [] for name in RULE_LISTS}
        self.accumulated: dict[str, list[Any]] = {}
        self.setters: dict[str, list[str]] = {}

    def apply(self, layer: Layer, data: Mapping[str, Any]) -> None:
        for section, table in data.items():
            if not isinstance(table, Mapping) or not table:
                self._structure(layer, {section: table}, None)  # reports an unknown section
                continue
            for key, value in table.items():
                full = f"{section}.{key}"
                if full in ACCUMULATED and full.startswith("policy."):
                    self._add_rules(layer, key, value)
                elif full in ACCUMULATED:
                    self._accumulate(layer, full, value)
                else:
                    self._structure(layer, {section: {key: value}}, full)
        self.loaded.sources.insert(0, layer.where)

    def _structure(self, layer: Layer, data: dict[str, Any], full: str | None) -> None:
        problems: list[str] = []
        self.config = structure_config(data, problems, base=self.config)
        self.loaded.problems += [f"{layer.where}: {p}" for p in problems]
        if full is not None and not problems and full.split(".")[0] in _SECTIONS:
            self.setters[full] = [layer.label]

    def _add_rules(self, layer: Layer, name: str, value: Any) -> None:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.loaded.problems.append(
                f"{layer.where}: policy.{name} should be a list of strings; ignored"
            )
            return
        for rule in value:
            if rule not in self.rules[name]:
                self.rules[name].append(rule)
                self.loaded.rule_origins[f"{name}:{rule}"] = layer.where
        self._note_setter(f"policy.{name}", layer, bool(value))

    def _accumulate(self, layer: Layer, full: str, value: Any) -> None:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.loaded.problems.append(f"{layer.where}: {full} should be a list of strings")
            return
        merged = self.accumulated.setdefault(full, [])
        merged += [v for v in value if v not in merged]
        self._note_setter(full, layer, bool(value))

    def _note_setter(self, full: str, layer: Layer, added: bool) -> None:
        if added and layer.label not in self.setters.setdefault(full, []):
            self.setters[full].append(layer.label)

    def finish(self) -> Config:
        policy = self.config.policy
        policy.allow, policy.ask, policy.deny = (self.rules[n] for n in RULE_LISTS)
        for full, values in self.accumulated.items():
            section, key = full.split(".", 1)
            problems: list[str] = []
            self.config = structure_config({section: {key: values}}, problems, self.config)
            self.loaded.problems += problems
        return self.config


def load_config(
    *,
    init_options: Mapping[str, Any] | None,
    client_section: Mapping[str, Any] | None,
    roots: Sequence[Path],
    user_config: Path,
    trust: TrustStore,
    managed_config: Path | None = None,
) -> LoadedConfig:
    """Merge all layers; never raises over bad configuration."""
    loaded = LoadedConfig(config=Config())
    managed = read_managed(managed_config) if managed_config else None
    loaded.managed = managed
    if managed is not None and managed.message:
        loaded.problems.append(managed.message)
    init = dict(init_options or {})
    layers: list[Layer] = []  # lowest precedence first

    user = read_toml(user_config, loaded.problems)
    if user is not None:
        layers.append(Layer(f"user file {user_config}", str(user_config), normalise(user), True))
    workspace: WorkspaceFile | None = None
    if roots:
        workspace = read_workspace_file(roots[0], trust, loaded.problems, loaded.notices)
    if workspace is not None:
        loaded.workspace_files.append(workspace)
        if workspace.data is not None:
            label = f"workspace file {workspace.path}"
            label += "" if workspace.trusted else " (tightening entries only: not approved)"
            layers.append(Layer(label, workspace.where, workspace.data, False))
    for name, data in (
        ("workspace/configuration", client_section or {}),
        ("initializationOptions", {k: v for k, v in init.items() if k not in CLIENT_ONLY_KEYS}),
    ):
        if data:
            layers.append(Layer(f"editor settings ({name})", name, normalise(data), True))
    if managed is not None and managed.present:
        layers.append(Layer(managed.label, str(managed.path), managed.data, True))

    merge = _Merge(loaded)
    trusted_roots: list[str] = []
    for layer in layers:
        data = layer.data
        if managed is not None and layer.data is not managed.data:
            data = _screened(layer, managed, loaded.notices)
        policy = data.get("policy")
        listed = policy.get("trusted_roots") if isinstance(policy, Mapping) else None
        if layer.user_level and isinstance(listed, list):
            trusted_roots += [r for r in listed if isinstance(r, str) and r not in trusted_roots]
        merge.apply(layer, data)
    config = merge.finish()
    config.policy.trusted_roots = trusted_roots
    client_trusted = init.get("workspaceTrusted") is True
    loaded.workspace_trusted = bool(roots) and (
        client_trusted or _root_is_listed(roots[0], trusted_roots)
    )
    config.lsp.project_servers = loaded.workspace_trusted and config.policy.mode != "readOnly"
    if workspace is not None and workspace.data is not None and not workspace.trusted:
        _tighten_sandbox(config, workspace, merge.setters, managed)
    loaded.config = config
    loaded.policy_sources = _sources(merge.setters)
    return loaded


def _tighten_sandbox(
    config: Config,
    workspace: WorkspaceFile,
    setters: dict[str, list[str]],
    managed: ManagedLayer | None,
) -> None:
    """An unapproved workspace file's sandbox settings only tighten what the other layers
    set, whatever their precedence: the stricter mode wins, network off wins."""
    assert workspace.data is not None
    mode, network_off = sandbox_tightening(workspace.data)
    locked = managed.locked if managed is not None else {}
    label = f"workspace file {workspace.path} (tightening)"
    if mode is not None and "shell.sandbox" not in locked:
        stricter = stricter_mode(config.shell.sandbox, mode)
        if stricter != config.shell.sandbox:
            config.shell.sandbox = stricter
            setters["shell.sandbox"] = [label]
    if network_off and "shell.sandbox_network" not in locked and config.shell.sandbox_network:
        config.shell.sandbox_network = False
        setters["shell.sandbox_network"] = [label]


def _sources(setters: dict[str, list[str]]) -> dict[str, str]:
    keys = [*POLICY_KEYS, *sorted(k for k in setters if k not in POLICY_KEYS)]
    return {key: " + ".join(setters.get(key) or ["default"]) for key in keys}


def load_layers(
    toolhost_options: Mapping[str, Any] | None,
    roots: Sequence[Path],
    dirs: Dirs,
    client_section: Mapping[str, Any] | None = None,
) -> LoadedConfig:
    """managed file > initializationOptions.toolhost > workspace/configuration >
    .toolhost.toml > user file."""
    return load_config(
        init_options=toolhost_options,
        client_section=client_section,
        roots=roots,
        user_config=dirs.user_config_file,
        trust=TrustStore(dirs.state),
        managed_config=managed_path_from(os.environ),
    )


def tighten_running_sandbox(running: ShellConfig, loaded: ShellConfig) -> None:
    """The shell section is not reconfigured live (a looser sandbox waits for a restart),
    but a stricter one applies at once: an approved file with `sandbox = "off"` that the
    agent rewrites must not keep the sandbox off until the next start. Commands read these
    fields from the runtime's config when each is planned (policy/planner.py)."""
    running.sandbox = stricter_mode(running.sandbox, loaded.sandbox)
    if running.sandbox_network and not loaded.sandbox_network:
        running.sandbox_network = False
    kept = [host for host in running.sandbox_network_allow if host in loaded.sandbox_network_allow]
    if kept != running.sandbox_network_allow:
        running.sandbox_network_allow = kept
