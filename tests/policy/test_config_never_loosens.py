"""Property: whatever the agent writes into a workspace .toolhost.toml the user has not
approved, the merged configuration is never looser than without the file (hypothesis over
every section and key of the settings tree, camelCase spellings, loosening values)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest
import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_server.config.layers import LoadedConfig, load_config
from lsp_server.config.tree import Config
from lsp_server.config.trust import TrustStore

USER = """\
[policy]
mode = "acceptEdits"
allow = ["bash(make test)"]
deny = ["bash(rm:*)"]
[shell]
sandbox_network = true
sandbox_network_allow = ["pypi.org"]
env_pass = ["MY_TOKEN"]
[workspace]
secret_patterns = ["*.secret"]
"""

SECTIONS = {
    name: sorted(attrs.fields_dict(getattr(Config(), name).__class__))
    for name in attrs.fields_dict(Config)
}
SCALARS = st.sampled_from(
    [
        "off", "bypass", "acceptEdits", "client", "allow", "read-only", "workspace-write",
        "default", "readOnly", "deny", "editor", "spawn", True, False, 0, 10**9, 0.0,
    ]
)  # fmt: skip
WORDS = st.sampled_from(
    ["Bash", "Edit", "Read", "*", "**", "!.env", "!*.pem", "/", "~", "..", "sh", "make",
     "bash(rm:*)", "write_file(**)", "*.secret", "evil.example", "*_TOKEN", "AWS_*"]
)  # fmt: skip
VALUES = st.one_of(
    SCALARS,
    st.lists(WORDS, max_size=3),
    st.dictionaries(st.sampled_from(["python", "rust"]), st.lists(WORDS, max_size=2), max_size=2),
)


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.title() for part in rest)


@st.composite
def workspace_files(draw: st.DrawFn) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for section in draw(st.lists(st.sampled_from(sorted(SECTIONS)), min_size=1, max_size=5)):
        if draw(st.integers(0, 9)) == 0:  # not a table: a problem, never a crash
            data[section] = draw(SCALARS)
            continue
        keys = draw(st.lists(st.sampled_from(SECTIONS[section]), min_size=1, max_size=5))
        table = data.get(section)
        if not isinstance(table, dict):
            table = data[section] = {}
        for key in keys:
            table[_camel(key) if draw(st.booleans()) else key] = draw(VALUES)
    return data


LOOSENESS = {"readOnly": 0, "default": 1, "acceptEdits": 2, "bypass": 3}
STRICTNESS = {"off": 0, "workspace-write": 1, "read-only": 2}


def load(tmp: Path, workspace: dict[str, Any] | None) -> LoadedConfig:
    root = tmp / "ws"
    root.mkdir(exist_ok=True)
    config = root / ".toolhost.toml"
    config.unlink(missing_ok=True)
    if workspace is not None:
        config.write_text(tomlkit.dumps(workspace))
    (tmp / "user.toml").write_text(USER)
    return load_config(
        init_options={"workspaceTrusted": True},  # the editor trusts the project: not enough
        client_section=None,
        roots=[root],
        user_config=tmp / "user.toml",
        trust=TrustStore(tmp / "state"),
    )


@pytest.mark.slow
@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(workspace=workspace_files())
def test_an_unapproved_workspace_file_never_loosens(
    tmp_path: Path, workspace: dict[str, Any]
) -> None:
    base = load(tmp_path, None).config
    got = load(tmp_path, workspace).config
    assert LOOSENESS[got.policy.mode] <= LOOSENESS[base.policy.mode]
    assert got.policy.unattended == "deny" or base.policy.unattended == "allow"
    assert set(got.policy.allow) <= set(base.policy.allow)
    assert set(base.policy.deny) <= set(got.policy.deny)
    assert set(base.policy.ask) <= set(got.policy.ask)
    assert got.policy.trusted_roots == base.policy.trusted_roots
    assert set(got.policy.read_only_commands) <= set(base.policy.read_only_commands)
    assert STRICTNESS[got.shell.sandbox] >= STRICTNESS[base.shell.sandbox]
    assert base.shell.sandbox_network or not got.shell.sandbox_network
    assert set(got.shell.sandbox_network_allow) <= set(base.shell.sandbox_network_allow)
    assert set(got.shell.env_pass) <= set(base.shell.env_pass)
    assert set(base.shell.env_drop) <= set(got.shell.env_drop)
    assert set(base.shell.sandbox_read_only) <= set(got.shell.sandbox_read_only)
    assert got.mcp.approvals == base.mcp.approvals or got.mcp.approvals == "auto"
    assert got.lsp.servers == base.lsp.servers
    assert got.lsp.provider == base.lsp.provider
    assert set(got.workspace.extra_roots) <= set(base.workspace.extra_roots)
    assert set(got.workspace.readable_roots) <= set(base.workspace.readable_roots)
    assert set(got.workspace.allowed_secrets) <= set(base.workspace.allowed_secrets)
    assert set(base.workspace.secret_patterns) <= set(got.workspace.secret_patterns)
    assert not any(p.lstrip().startswith("!") for p in got.workspace.secret_patterns)
    assert set(base.workspace.protected_paths) <= set(got.workspace.protected_paths)
    assert got.workspace.allow_broad_roots == base.workspace.allow_broad_roots
    assert got.web == base.web
    assert got.checkpoints == base.checkpoints


MANAGED = """\
[policy]
allow_managed_only = true
mode = "default"
deny = ["bash(curl:*)"]
ask = ["bash(git push:*)"]
allow = ["Read"]
[shell]
sandbox = "workspace-write"
sandbox_network = false
[mcp]
approvals = "auto"
"""


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(user=workspace_files(), editor=workspace_files())
def test_no_lower_layer_moves_a_managed_lock(
    tmp_path: Path, user: dict[str, Any], editor: dict[str, Any]
) -> None:
    (tmp_path / "managed.toml").write_text(MANAGED)
    (tmp_path / "user.toml").write_text(tomlkit.dumps(user))
    (tmp_path / "ws").mkdir(exist_ok=True)
    loaded = load_config(
        init_options=editor,
        client_section=editor,
        roots=[tmp_path / "ws"],
        user_config=tmp_path / "user.toml",
        trust=TrustStore(tmp_path / "state"),
        managed_config=tmp_path / "managed.toml",
    )
    config = loaded.config
    assert loaded.managed is not None and loaded.managed.state == "applied"
    assert config.policy.mode == "default"
    assert config.policy.allow == ["Read"]
    assert "bash(curl:*)" in config.policy.deny and "bash(git push:*)" in config.policy.ask
    assert config.policy.unattended == "deny"
    assert config.shell.sandbox == "workspace-write" and config.shell.sandbox_network is False
    assert config.mcp.approvals == "auto"
    assert loaded.command_line("mcp.approvals", "client", "--approvals client") is None
    assert not loaded.may_answer_yes("--yes")
