"""The VS Code settings (declared once, in package.json) are exactly the server's config keys.

Every server-bound `toolhost.<section>.<key>` setting must be accepted by the server's config
tree with the same default and a matching type; every server config key must be either a
VS Code setting or listed in NOT_IN_VSCODE with the reason.
"""

from __future__ import annotations

import json
import typing
from typing import Any

import attrs
import pytest

from lsp_server.config.tree import Config, snake_case, structure_config
from tests.vscode.vscode_env import EXTENSION_DIR

CLIENT_ONLY_PREFIXES = ("toolhost.server.", "toolhost.trace.")

# Server settings deliberately not offered in the VS Code settings UI.
NOT_IN_VSCODE = {
    "policy.trusted_roots": "user config file only: a workspace must not trust itself",
    "lsp.project_servers": "set by toolhost from workspace trust, never by a setting",
    "lsp.editor_timeout_seconds": "tuning knob, .toolhost.toml only",
    "limits.max_line_chars": "tuning knob, .toolhost.toml only",
    "limits.read_default_lines": "tuning knob, .toolhost.toml only",
    "limits.max_file_bytes": "tuning knob, .toolhost.toml only",
    "limits.hash_limit_bytes": "tuning knob, .toolhost.toml only",
    "limits.stored_results": "tuning knob, .toolhost.toml only",
    "shell.kill_grace_seconds": "tuning knob, .toolhost.toml only",
    "shell.pipe_wait_seconds": "tuning knob, .toolhost.toml only",
    "shell.capture_bytes": "tuning knob, .toolhost.toml only",
    "shell.kill_daemons": "tuning knob, .toolhost.toml only",
    "shell.sandbox_read_only": "tuning knob, .toolhost.toml only",
    "workspace.protected_paths": "adds to a built-in list; a config file setting",
    "shell.sandbox_hide": "adds to the built-in credential list; a config file setting",
    "search.max_results": "tuning knob, .toolhost.toml only",
    "edits.editor_timeout_seconds": "tuning knob, .toolhost.toml only",
    "lsp.diagnostics_settle_seconds": "tuning knob, .toolhost.toml only",
    "lsp.document_idle_seconds": "tuning knob, .toolhost.toml only",
    "lsp.restart_backoff_seconds": "tuning knob, .toolhost.toml only",
    "lsp.start_timeout_seconds": "tuning knob, .toolhost.toml only",
    "shell.max_background_jobs": "tuning knob, .toolhost.toml only",
    "shell.minimal_timeout_ms": "tuning knob, .toolhost.toml only",
    "lsp.idle_seconds": "tuning knob, .toolhost.toml only",
    "lsp.ready_timeout_seconds": "tuning knob, .toolhost.toml only",
    "lsp.request_timeout_seconds": "tuning knob, .toolhost.toml only",
    "web.timeout_seconds": "tuning knob, .toolhost.toml only",
    "web.max_bytes": "tuning knob, .toolhost.toml only",
    "checkpoints.enabled": "checkpoint bounds and switch: .toolhost.toml only",
    "checkpoints.max_age_days": "checkpoint bounds and switch: .toolhost.toml only",
    "checkpoints.max_checkpoints": "checkpoint bounds and switch: .toolhost.toml only",
    "checkpoints.budget_mb": "checkpoint bounds and switch: .toolhost.toml only",
    "checkpoints.max_file_bytes": "checkpoint bounds and switch: .toolhost.toml only",
    "checkpoints.ignored_budget_mb": "checkpoint bounds and switch: .toolhost.toml only",
    "checkpoints.skip_folders": "checkpoint bounds and switch: .toolhost.toml only",
    "checkpoints.seed_from_git": "checkpoint bounds and switch: .toolhost.toml only",
    "checkpoints.max_root_files": "checkpoint bounds and switch: .toolhost.toml only",
    "checkpoints.max_root_mb": "checkpoint bounds and switch: .toolhost.toml only",
    "checkpoints.measure_seconds": "checkpoint bounds and switch: .toolhost.toml only",
    "checkpoints.watch_share": "checkpoint bounds and switch: .toolhost.toml only",
    "checkpoints.mark_share": "checkpoint bounds and switch: .toolhost.toml only",
    "checkpoints.exact_attribution": "checkpoint bounds and switch: .toolhost.toml only",
    "shell.sandbox_network_allow": "a network allow list the user writes in a config file,"
    " not a setting a workspace's .vscode folder could carry",
    "acp.mcp_server": "read by `toolhost acp` only, which VS Code does not start",
    "mcp.approvals": "read by `toolhost mcp` only, which VS Code does not start",
    "shell.env_pass": "loosens (credentials reach commands): the user config file only,"
    " not a setting a workspace's .vscode folder could carry",
    "shell.env_drop": "a list of credential names, kept in the config files beside env_pass",
    "workspace.allow_broad_roots": "loosens (a home folder as a root): the user config file only",
}


def declared_settings() -> dict[str, dict[str, Any]]:
    package = json.loads((EXTENSION_DIR / "package.json").read_text())
    properties: dict[str, dict[str, Any]] = package["contributes"]["configuration"]["properties"]
    return {
        key: spec for key, spec in properties.items() if not key.startswith(CLIENT_ONLY_PREFIXES)
    }


def server_keys() -> dict[str, attrs.Attribute[Any]]:
    keys: dict[str, attrs.Attribute[Any]] = {}
    config = Config()
    for section in attrs.fields(Config):
        section_type = type(getattr(config, section.name))
        for field in attrs.fields(section_type):
            keys[f"{section.name}.{field.name}"] = field
    return keys


def dotted(setting: str) -> str:
    _, section, key = setting.split(".")
    return f"{snake_case(section)}.{snake_case(key)}"


def server_default(key: str) -> Any:
    section, name = key.split(".")
    return getattr(getattr(Config(), section), name)


def test_every_setting_is_accepted_with_its_default() -> None:
    settings = declared_settings()
    assert settings, "package.json declares no server settings"
    payload: dict[str, dict[str, Any]] = {}
    for setting, spec in settings.items():
        _, section, key = setting.split(".")
        payload.setdefault(section, {})[key] = spec["default"]
    problems: list[str] = []
    structured = structure_config(payload, problems)
    assert problems == []
    assert structured == Config(), "package.json defaults differ from the server's defaults"
    for setting, spec in settings.items():
        assert spec["default"] == server_default(dotted(setting)), setting


def test_settings_are_exactly_the_server_keys() -> None:
    declared = {dotted(setting) for setting in declared_settings()}
    server = set(server_keys())
    assert declared <= server, f"settings the server does not know: {sorted(declared - server)}"
    undeclared = server - declared - set(NOT_IN_VSCODE)
    assert not undeclared, (
        f"server config keys missing from extension/vscode/package.json: {sorted(undeclared)}; "
        "declare them in contributes.configuration or list them in NOT_IN_VSCODE"
    )
    assert not (declared & set(NOT_IN_VSCODE)), "a key is both declared and excluded"


JSON_TYPES = {"int": "integer", "float": "number", "bool": "boolean", "str": "string"}


@pytest.mark.parametrize("setting", sorted(declared_settings()))
def test_setting_type_matches_the_server(setting: str) -> None:
    spec = declared_settings()[setting]
    annotation = str(server_keys()[dotted(setting)].type)
    if annotation.startswith("Literal["):
        choices = typing.get_args(eval(annotation, {"Literal": typing.Literal}))
        assert spec["type"] == "string"
        assert tuple(spec["enum"]) == choices
    elif annotation.startswith("list[str]"):
        assert spec["type"] == "array"
        assert spec["items"] == {"type": "string"}
    elif annotation.startswith("dict[str, list[str]]"):
        assert spec["type"] == "object"
    else:
        assert spec["type"] == JSON_TYPES[annotation]
    assert spec.get("description") or spec.get("markdownDescription")


def test_wrong_values_are_reported_not_accepted() -> None:
    problems: list[str] = []
    structure_config({"policy": {"mode": "yolo"}, "shell": {"defaultTimeoutMs": "1"}}, problems)
    assert len(problems) == 2


def test_server_accepts_what_the_extension_sends() -> None:
    """The initializationOptions the extension builds (every setting at its default, untrusted)."""
    from lsprotocol import types

    from lsp_server.server.server import ToolhostServer

    toolhost: dict[str, Any] = {"workspaceTrusted": False}
    for setting, spec in declared_settings().items():
        _, section, key = setting.split(".")
        toolhost.setdefault(section, {})[key] = spec["default"]
    toolhost["policy"]["mode"] = "readOnly"
    server = ToolhostServer()
    server.setup(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=None,
            initialization_options={"toolhost": toolhost},
        )
    )
    assert server.config_state.problems == []
    assert server.config.policy.mode == "readOnly"
