"""The managed layer (config/managed.py) over every other layer, and allow_always on an
approved or unapproved workspace file (policy/persist.py), on real files in tmp_path."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from lsp_server.config.layers import LoadedConfig, load_config
from lsp_server.config.trust import TrustStore
from lsp_server.policy.persist import persist_allow_rule

LOOSE_USER = """\
[policy]
mode = "bypass"
allow = ["Bash", "Edit(src/**)"]
unattended = "allow"
deny = ["bash(curl:*)"]
[shell]
sandbox = "off"
sandbox_network = true
[mcp]
approvals = "client"
"""


def load(
    tmp_path: Path,
    managed: str | None,
    user: str = LOOSE_USER,
    workspace: str | None = None,
    init: dict[str, Any] | None = None,
) -> LoadedConfig:
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    if workspace is not None:
        (root / ".toolhost.toml").write_text(workspace)
    (tmp_path / "user.toml").write_text(user)
    managed_file = tmp_path / "managed.toml"
    if managed is not None:
        managed_file.write_text(managed)
    return load_config(
        init_options=init,
        client_section=None,
        roots=[root],
        user_config=tmp_path / "user.toml",
        trust=TrustStore(tmp_path / "state"),
        managed_config=managed_file,
    )


def test_no_managed_file_changes_nothing(tmp_path: Path) -> None:
    loaded = load(tmp_path, None)
    assert loaded.managed is not None and loaded.managed.state == "absent"
    assert loaded.config.policy.mode == "bypass" and loaded.config.shell.sandbox == "off"
    assert loaded.policy_sources["policy.mode"] == f"user file {tmp_path / 'user.toml'}"
    # A command-line flag beats the config files when nothing locks the setting.
    assert loaded.command_line("mcp.approvals", "auto", "--approvals auto") == "auto"
    assert loaded.policy_sources["mcp.approvals"] == "command line --approvals auto"
    assert loaded.may_answer_yes("--yes")


def test_locked_settings_beat_user_file_editor_settings_and_flags(tmp_path: Path) -> None:
    managed = '[policy]\nmode = "default"\n[shell]\nsandbox = "workspace-write"\n'
    managed += '[mcp]\napprovals = "auto"\n'
    loaded = load(tmp_path, managed, init={"policy": {"mode": "acceptEdits"}})
    config = loaded.config
    assert config.policy.mode == "default"
    assert config.shell.sandbox == "workspace-write"
    assert config.mcp.approvals == "auto"
    assert config.shell.sandbox_network is True  # not locked: the user's value stands
    assert loaded.command_line("mcp.approvals", "client", "--approvals client") is None
    source = f"managed file {tmp_path / 'managed.toml'}"
    assert loaded.policy_sources["policy.mode"] == source
    assert loaded.policy_sources["mcp.approvals"] == source
    notices = "\n".join(loaded.notices)
    assert "policy.mode = 'bypass' ignored: the managed file" in notices
    assert "initializationOptions: policy.mode = 'acceptEdits' ignored" in notices
    assert "command line --approvals client ignored: the managed file" in notices
    assert loaded.managed is not None
    assert set(loaded.managed.locked) == {"policy.mode", "shell.sandbox", "mcp.approvals"}


def test_managed_rules_always_apply_beside_the_others(tmp_path: Path) -> None:
    loaded = load(tmp_path, '[policy]\ndeny = ["bash(git push:*)"]\nallow = ["Read"]\n')
    policy = loaded.config.policy
    assert policy.deny == ["bash(curl:*)", "bash(git push:*)"]
    assert policy.allow == ["Bash", "Edit(src/**)", "Read"]
    assert " + " in loaded.policy_sources["policy.deny"]  # both layers named


def test_managed_ask_rules_are_not_answered_by_a_lower_bypass(tmp_path: Path) -> None:
    loaded = load(tmp_path, '[policy]\nask = ["bash(git push:*)"]\n')
    assert loaded.config.policy.ask == ["bash(git push:*)"]
    assert loaded.config.policy.mode == "default"
    assert loaded.config.policy.unattended == "deny"
    assert not loaded.may_answer_yes("--yes")
    assert "command line --yes ignored" in "\n".join(loaded.notices)


def test_allow_managed_only_drops_every_lower_allow(tmp_path: Path) -> None:
    workspace = '[policy]\nallow = ["Edit(docs/**)"]\nmode = "acceptEdits"\n'
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".toolhost.toml").write_text(workspace)
    TrustStore(tmp_path / "state").approve_config(
        root, root / ".toolhost.toml", hashlib.sha256(workspace.encode()).hexdigest()
    )
    loaded = load(
        tmp_path,
        '[policy]\nallow_managed_only = true\nallow = ["bash(make test)"]\n',
        workspace=workspace,
    )
    policy = loaded.config.policy
    assert policy.allow == ["bash(make test)"]
    assert policy.mode == "default" and policy.unattended == "deny"
    assert loaded.config.mcp.approvals == "auto"
    assert loaded.command_line("mcp.approvals", "client", "--approvals client") is None
    notices = "\n".join(loaded.notices)
    assert "policy.allow = ['Edit(docs/**)'] ignored" in notices
    assert "allows only its own rules" in notices


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("[policy\nmode = 1", "is not valid TOML"),
        ('[policy]\nmode = "yolo"\n', "invalid setting policy.mode"),
        ("[policy]\nallow_managed_olny = true\n", "unknown setting policy.allow_managed_olny"),
        ('[policy]\ndeny = ["bash(unclosed"]\n', "policy.deny"),
        ('[policy]\nallow_managed_only = "yes"\n', "allow_managed_only should be true or false"),
        (b"\xff\xfe[policy]", "is not valid TOML"),
    ],
)
def test_an_invalid_managed_file_fails_closed(
    tmp_path: Path, content: str | bytes, why: str
) -> None:
    managed = tmp_path / "managed.toml"
    if isinstance(content, bytes):
        managed.write_bytes(content)
        loaded = load(tmp_path, None)
    else:
        loaded = load(tmp_path, content)
    assert_failed_closed(loaded, why)


def test_an_unreadable_managed_file_fails_closed(tmp_path: Path) -> None:
    (tmp_path / "managed.toml").mkdir()  # not a regular file
    assert_failed_closed(load(tmp_path, None), "cannot be read")


def assert_failed_closed(loaded: LoadedConfig, why: str) -> None:
    config = loaded.config
    assert loaded.managed is not None and loaded.managed.state == "invalid"
    assert why in loaded.managed.message and "fails closed" in loaded.managed.message
    assert loaded.managed.message in loaded.problems
    assert config.policy.mode == "readOnly"
    assert "Bash" in config.policy.ask
    assert config.policy.allow == []  # the user's Bash and Edit rules are gone
    assert config.policy.unattended == "deny"
    assert config.shell.sandbox == "read-only" and config.shell.sandbox_network is False
    assert config.mcp.approvals == "auto"
    assert config.policy.deny == ["bash(curl:*)"]  # tightening rules still count
    assert "(invalid: toolhost fails closed)" in loaded.policy_sources["policy.mode"]


def test_an_unapproved_workspace_cannot_tighten_past_a_lock(tmp_path: Path) -> None:
    """A lock is a lock: the managed file's sandbox mode is the mode (it chose it)."""
    loaded = load(
        tmp_path,
        '[shell]\nsandbox = "workspace-write"\n',
        user="",
        workspace='[shell]\nsandbox = "read-only"\n',
    )
    assert loaded.config.shell.sandbox == "workspace-write"


def test_allow_always_keeps_an_approved_file_approved(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    trust = TrustStore(tmp_path / "state")
    persist_allow_rule(root, "bash(make test)", trust)  # no file yet: the user's own
    path = root / ".toolhost.toml"
    assert trust.approved_config(root, path) == hashlib.sha256(path.read_bytes()).hexdigest()
    persist_allow_rule(root, "bash(make lint)", trust)
    assert trust.approved_config(root, path) == hashlib.sha256(path.read_bytes()).hexdigest()
    loaded = load(tmp_path, None, user="")
    assert loaded.workspace_files[0].trusted
    assert loaded.config.policy.allow == ["bash(make test)", "bash(make lint)"]


def test_allow_always_does_not_approve_what_the_agent_added(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    trust = TrustStore(tmp_path / "state")
    persist_allow_rule(root, "bash(make test)", trust)
    path = root / ".toolhost.toml"
    # The agent appends its own loosening lines; then the user says "always" to a rule.
    path.write_text(path.read_text() + '[shell]\nsandbox = "off"\n')
    persist_allow_rule(root, "bash(make lint)", trust)
    assert trust.approved_config(root, path) != hashlib.sha256(path.read_bytes()).hexdigest()
    loaded = load(tmp_path, None, user="")
    assert not loaded.workspace_files[0].trusted
    assert loaded.config.shell.sandbox == "workspace-write"
    # The user's own rules (recorded one by one) still apply.
    assert loaded.config.policy.allow == ["bash(make test)", "bash(make lint)"]


def test_an_approval_is_for_one_root_only(tmp_path: Path) -> None:
    """The same bytes the user approved for one project do not apply in another: the agent
    cannot copy an approved file into the workspace it works in."""
    trust = TrustStore(tmp_path / "state")
    content = '[policy]\nmode = "bypass"\n'
    for name in ("approved", "other"):
        (tmp_path / name).mkdir()
        (tmp_path / name / ".toolhost.toml").write_text(content)
    first = tmp_path / "approved"
    trust.approve_config(
        first, first / ".toolhost.toml", hashlib.sha256(content.encode()).hexdigest()
    )
    for name, trusted in (("approved", True), ("other", False)):
        loaded = load_config(
            init_options=None,
            client_section=None,
            roots=[tmp_path / name],
            user_config=tmp_path / "none.toml",
            trust=trust,
        )
        assert loaded.workspace_files[0].trusted is trusted
        assert loaded.config.policy.mode == ("bypass" if trusted else "default")


RULE_CORPUS = [
    "Bash", "bash(git status)", "bash(npm run test:*)", "bash(rm -rf *)", "bash(a && b)",
    "bash(echo > f)", "bash($(x))", "bash()", "bash( )", "Edit(docs/**)", "Edit(!x)",
    "Edit(#x)", "Read(secrets/**)", "write_file(a[b)", "9Edit", "Edit(", "", "  ",
    "Tool ( spec )", "bash(git push:*)", "bash(ls | wc)", "bash(`id`)", "Edit(**/)",
]  # fmt: skip


@pytest.mark.parametrize("text", RULE_CORPUS)
def test_the_managed_rule_check_agrees_with_the_policy_parser(text: str) -> None:
    from lsp_server.config.rule_syntax import rule_problem
    from lsp_server.policy.rules import RuleError, parse_rule

    try:
        parse_rule(text)
        parsed = True
    except RuleError:
        parsed = False
    assert (rule_problem(text) is None) is parsed


@pytest.mark.parametrize("odd", ["policy = 5\n", 'shell = "off"\n', "mcp = []\n", "x = 1\n"])
def test_a_section_that_is_not_a_table_is_a_problem_never_a_crash(tmp_path: Path, odd: str) -> None:
    loaded = load(tmp_path, None, user=odd, workspace=odd, init={"policy": 7, "shell": []})
    assert loaded.problems  # reported, defaults kept
    assert loaded.config.policy.mode == "default"
    managed = load(tmp_path, odd, user="")
    assert managed.managed is not None and managed.managed.state == "invalid"
