"""The configuration as `toolhost status` and `toolhost doctor` print it: the managed file,
each workspace config file and whether its content is approved, and which layer set each
policy value."""

from __future__ import annotations

from typing import Any

from lsp_server.config.layers import LoadedConfig
from lsp_server.protocol.config_messages import (
    ConfigUntrustedParams,
    ManagedConfigInfo,
    WorkspaceConfigInfo,
)


def value_of(loaded: LoadedConfig, key: str) -> Any:
    section, _, name = key.partition(".")
    return getattr(getattr(loaded.config, section, None), name, None)


def config_lines(loaded: LoadedConfig) -> list[str]:
    lines: list[str] = []
    managed = loaded.managed
    if managed is None or managed.state == "absent":
        where = f" ({managed.path})" if managed is not None else ""
        lines.append(f"managed file: none{where}")
    elif managed.state == "invalid":
        lines.append(f"managed file: INVALID: {managed.message}")
    else:
        locks = ", ".join(sorted(managed.locked)) or "none"
        only = "; only its allow rules apply" if managed.allow_managed_only else ""
        lines.append(f"managed file: {managed.path} (locks: {locks}{only})")
    if not loaded.workspace_files:
        lines.append("workspace config: none")
    for found in loaded.workspace_files:
        if found.trusted:
            lines.append(f"workspace config: {found.path}: trusted ({found.reason})")
            continue
        lines.append(f"workspace config: {found.path}: NOT TRUSTED ({found.reason})")
        if found.ignored:
            lines.append("  ignored until you approve it: " + ", ".join(found.ignored))
            lines.append(f"  review and approve it: toolhost trust {found.path}")
        if found.sha256:
            lines.append(f"  sha256 {found.sha256}")
    lines.append("layers (highest first): " + (", ".join(loaded.sources) or "defaults only"))
    return lines


def sources_lines(loaded: LoadedConfig) -> list[str]:
    width = max((len(key) for key in loaded.policy_sources), default=0)
    return [
        f"{key.ljust(width)}  {value_of(loaded, key)!r}  from {source}"
        for key, source in loaded.policy_sources.items()
    ]


def render_config(loaded: LoadedConfig) -> str:
    out = ["Configuration", *(f"  {line}" for line in config_lines(loaded))]
    out += [
        "",
        "Policy values and the layer that set each",
        *(f"  {line}" for line in sources_lines(loaded)),
    ]
    problems = loaded.problems + loaded.notices
    if problems:
        out += ["", "Configuration problems and ignored entries", *(f"  {p}" for p in problems)]
    return "\n".join(out)


def workspace_infos(loaded: LoadedConfig) -> list[WorkspaceConfigInfo]:
    return [
        WorkspaceConfigInfo(
            path=str(found.path),
            sha256=found.sha256,
            state="trusted" if found.trusted else "untrusted",
            reason=found.reason,
            ignored=list(found.ignored),
        )
        for found in loaded.workspace_files
    ]


def managed_info(loaded: LoadedConfig) -> ManagedConfigInfo | None:
    managed = loaded.managed
    if managed is None or not managed.present:
        return None
    return ManagedConfigInfo(
        path=str(managed.path),
        state=managed.state,
        message=managed.message,
        locked=sorted(managed.locked),
    )


def as_json(loaded: LoadedConfig) -> dict[str, Any]:
    """The same, for `toolhost status --json`, in the words of toolhost/status."""
    from lsp_server.protocol import message_converter

    converter = message_converter()
    return {
        "managedConfig": converter.unstructure(managed_info(loaded)),
        "workspaceConfig": converter.unstructure(workspace_infos(loaded)),
        "configLayers": list(loaded.sources),
        "policySources": dict(loaded.policy_sources),
        "configProblems": loaded.problems + loaded.notices,
    }


def status_fields(loaded: LoadedConfig | None) -> dict[str, Any]:
    """policySources, configLayers, workspaceConfig and managedConfig for toolhost/status."""
    if loaded is None:
        return {"policy_sources": {}}
    return {
        "policy_sources": dict(loaded.policy_sources),
        "config_layers": list(loaded.sources),
        "workspace_config": workspace_infos(loaded),
        "managed_config": managed_info(loaded),
    }


def untrusted_notices(loaded: LoadedConfig | None) -> list[ConfigUntrustedParams]:
    """One toolhost/configUntrusted per root file whose loosening entries wait for approval."""
    if loaded is None:
        return []
    return [
        ConfigUntrustedParams(
            path=str(found.path), sha256=found.sha256, reason=found.reason, ignored=found.ignored
        )
        for found in loaded.workspace_files
        if not found.trusted and found.ignored and found.sha256
    ]
