"""Configuration layers, merged with a clear precedence, and workspace trust.

Precedence (highest first): initializationOptions `toolhost` > workspace/configuration
section `toolhost` > `.toolhost.toml` at the workspace root > the user file
`$XDG_CONFIG_HOME/toolhost/config.toml` > defaults.

- Scalar settings: the highest layer that sets a key wins.
- Rule lists (`policy.allow`, `policy.ask`, `policy.deny`) accumulate over all layers, so
  no layer can drop another layer's deny rule.
- `trusted_roots` is honoured from the user's own layers only (not from the workspace file).
- An untrusted workspace file can only tighten: its `deny` and `ask` rules, `mode` default or
  readOnly, `unattended = "deny"`, the approval timeout, extra secret patterns, a stricter
  `shell.sandbox` (and `sandbox_network = false`, over every other layer) and the
  harmless limits/search/edits sections apply; its `allow` rules apply one by one when this
  user recorded them through allow_always; everything else (other modes, unattended allow,
  read-only command lists, extra or readable roots, language server commands ...) is ignored
  with a visible notice.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from lsp_server.config.tree import Config, snake_case, structure_config
from lsp_server.config.trust import TrustStore
from lsp_server.dirs import Dirs
from lsp_server.sandbox import stricter_mode

WORKSPACE_CONFIG_NAME = ".toolhost.toml"
RULE_LISTS = ("allow", "ask", "deny")
# Keys of the initializationOptions `toolhost` object that are not settings.
CLIENT_ONLY_KEYS = frozenset(("workspaceTrusted", "token"))
# What an untrusted workspace file may set (section -> keys, "*" = the whole section).
_TIGHTENING = {
    "limits": "*",
    "search": "*",
    "edits": "*",
    "policy": {"deny", "ask", "approval_timeout_seconds", "mode", "unattended", "allow"},
    "workspace": {"secret_patterns"},
    "shell": {"sandbox", "sandbox_network"},
    # acp.mcp_server: off gives the agent fewer tools; on is the default anyway.
    "acp": "*",
}


@attrs.define
class LoadedConfig:
    config: Config
    problems: list[str] = attrs.Factory(list)
    """Invalid entries (shown with window/showMessage, defaults kept)."""
    notices: list[str] = attrs.Factory(list)
    """Workspace entries ignored because the workspace is not trusted."""
    sources: list[str] = attrs.Factory(list)
    """Where settings came from, highest precedence first (for toolhost/status)."""
    rule_origins: dict[str, str] = attrs.Factory(dict)
    """`list:rule` -> the source that contributed it."""
    workspace_trusted: bool = False


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


def _normalise(data: Mapping[str, Any]) -> dict[str, Any]:
    """snake_case section and key names so that layers compare and filter alike."""
    out: dict[str, Any] = {}
    for section, value in data.items():
        key = snake_case(section) if isinstance(section, str) else section
        if isinstance(value, Mapping):
            out[key] = {snake_case(k) if isinstance(k, str) else k: v for k, v in value.items()}
        else:
            out[key] = value
    return out


def _root_is_listed(root: Path, listed: Sequence[str]) -> bool:
    for entry in listed:
        try:
            if Path(entry).expanduser().resolve() == root:
                return True
        except (OSError, RuntimeError):
            continue
    return False


def _tightens_sandbox(key: str, value: Any) -> bool:
    if key == "sandbox":
        return value in ("workspace-write", "read-only")
    return value is False  # sandbox_network


def _apply_sandbox_tightening(config: Config, workspace: Mapping[str, Any]) -> None:
    """An untrusted workspace's sandbox settings only tighten what the other layers set,
    whatever their precedence: the stricter mode wins, network off wins."""
    shell = workspace.get("shell")
    if not isinstance(shell, Mapping):
        return
    mode = shell.get("sandbox")
    if mode in ("workspace-write", "read-only"):
        config.shell.sandbox = stricter_mode(config.shell.sandbox, mode)
    if shell.get("sandbox_network") is False:
        config.shell.sandbox_network = False


def _added_patterns_only(patterns: list[Any], notices: list[str], where: str) -> list[Any]:
    """An untrusted layer may add secret patterns, never take one away: a `!pattern`
    (gitignore negation) would un-hide a built-in secret such as `.env`."""
    kept = []
    for pattern in patterns:
        if isinstance(pattern, str) and pattern.lstrip().startswith("!"):
            notices.append(
                f"{where}: workspace.secret_patterns entry {pattern!r} ignored (workspace not "
                "trusted: it may only add secret patterns; allow a file with "
                "workspace.allowed_secrets in your user config)"
            )
        else:
            kept.append(pattern)
    return kept


def _filter_untrusted(
    data: dict[str, Any], root: Path, trust: TrustStore, notices: list[str], where: str
) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for section, value in data.items():
        allowed = _TIGHTENING.get(section)
        if allowed is None or not isinstance(value, Mapping):
            notices.append(f"{where}: [{section}] ignored (workspace not trusted)")
            continue
        table: dict[str, Any] = {}
        for key, item in value.items():
            if allowed != "*" and key not in allowed:
                notices.append(f"{where}: {section}.{key} ignored (workspace not trusted)")
            elif section == "policy" and key == "mode" and item not in ("default", "readOnly"):
                notices.append(f"{where}: policy.mode = {item!r} ignored (workspace not trusted)")
            elif section == "shell" and not _tightens_sandbox(key, item):
                notices.append(
                    f"{where}: shell.{key} = {item!r} ignored (workspace not trusted: it may "
                    "only make the sandbox stricter)"
                )
            elif section == "policy" and key == "unattended" and item != "deny":
                notices.append(
                    f"{where}: policy.unattended = {item!r} ignored (workspace not trusted)"
                )
            elif section == "workspace" and key == "secret_patterns" and isinstance(item, list):
                table[key] = _added_patterns_only(item, notices, where)
            elif section == "policy" and key == "allow" and isinstance(item, list):
                own = [r for r in item if isinstance(r, str) and trust.is_recorded(root, r)]
                for rule in item:
                    if rule not in own:
                        notices.append(
                            f"{where}: allow rule {rule!r} ignored (workspace not trusted and "
                            "the rule was not approved by you with 'always allow')"
                        )
                table[key] = own
            else:
                table[key] = item
        kept[section] = table
    return kept


def load_config(
    *,
    init_options: Mapping[str, Any] | None,
    client_section: Mapping[str, Any] | None,
    roots: Sequence[Path],
    user_config: Path,
    trust: TrustStore,
) -> LoadedConfig:
    """Merge all layers; never raises over bad configuration."""
    loaded = LoadedConfig(config=Config())
    init = dict(init_options or {})
    client_trusted = init.get("workspaceTrusted") is True
    layers: list[tuple[str, dict[str, Any]]] = []  # lowest precedence first

    user = read_toml(user_config, loaded.problems)
    if user is not None:
        layers.append((str(user_config), _normalise(user)))
    user_trusted_roots = [
        str(r)
        for r in (layers[0][1].get("policy", {}).get("trusted_roots", []) if layers else [])
        if isinstance(r, str)
    ]
    client_layers = [
        ("workspace/configuration", _normalise(client_section or {})),
        (
            "initializationOptions",
            _normalise({k: v for k, v in init.items() if k not in CLIENT_ONLY_KEYS}),
        ),
    ]
    for _, data in client_layers:
        listed = data.get("policy", {}).get("trusted_roots", [])
        user_trusted_roots += (
            [r for r in listed if isinstance(r, str)] if isinstance(listed, list) else []
        )

    untrusted_workspace: dict[str, Any] = {}
    if roots:
        root = roots[0]
        where = str(root / WORKSPACE_CONFIG_NAME)
        workspace = read_toml(root / WORKSPACE_CONFIG_NAME, loaded.problems)
        loaded.workspace_trusted = client_trusted or _root_is_listed(root, user_trusted_roots)
        if workspace is not None:
            data = _normalise(workspace)
            if isinstance(data.get("policy"), Mapping) and "trusted_roots" in data["policy"]:
                data["policy"] = {k: v for k, v in data["policy"].items() if k != "trusted_roots"}
                loaded.notices.append(
                    f"{where}: policy.trusted_roots is read from the user config only"
                )
            if not loaded.workspace_trusted:
                data = _filter_untrusted(data, root, trust, loaded.notices, where)
                untrusted_workspace = data
            layers.append((where, data))
    layers += [(name, data) for name, data in client_layers if data]

    rules: dict[str, list[str]] = {name: [] for name in RULE_LISTS}
    config = loaded.config
    for where, data in layers:
        policy = data.get("policy")
        if isinstance(policy, Mapping):
            rest = dict(policy)
            for name in RULE_LISTS:
                if name not in rest:
                    continue
                value = rest.pop(name)
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    loaded.problems.append(
                        f"{where}: policy.{name} should be a list of strings; ignored"
                    )
                    continue
                for rule in value:
                    if rule not in rules[name]:
                        rules[name].append(rule)
                        loaded.rule_origins[f"{name}:{rule}"] = where
            data = {**data, "policy": rest}
        layer_problems: list[str] = []
        config = structure_config(data, layer_problems, base=config)
        loaded.problems += [f"{where}: {p}" for p in layer_problems]
        loaded.sources.insert(0, where)
    config.policy.allow, config.policy.ask, config.policy.deny = (
        rules["allow"],
        rules["ask"],
        rules["deny"],
    )
    config.policy.trusted_roots = user_trusted_roots
    config.lsp.project_servers = loaded.workspace_trusted and config.policy.mode != "readOnly"
    _apply_sandbox_tightening(config, untrusted_workspace)
    loaded.config = config
    return loaded


def load_layers(
    toolhost_options: Mapping[str, Any] | None,
    roots: Sequence[Path],
    dirs: Dirs,
    client_section: Mapping[str, Any] | None = None,
) -> LoadedConfig:
    """initializationOptions.toolhost > workspace/configuration > .toolhost.toml > user file."""
    return load_config(
        init_options=toolhost_options,
        client_section=client_section,
        roots=roots,
        user_config=dirs.user_config_file,
        trust=TrustStore(dirs.state),
    )
