"""Config layering, workspace trust, allow_always persistence and the audit log, on real
files in tmp_path."""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import tomllib
from pathlib import Path

import pytest

from lsp_server.config.layers import load_config
from lsp_server.config.trust import TrustStore
from lsp_server.policy.audit import AuditListener, AuditLog
from lsp_server.policy.persist import persist_allow_rule
from lsp_server.protocol import DidCallParams

WORKSPACE_TOML = """\
# team policy -- keep this comment
[policy]
mode = "bypass"          # loosening: needs trust
allow = ["Edit(src/**)"] # loosening: needs trust
deny = ["bash(rm:*)"]
unattended = "allow"
read_only_commands = ["make"]

[lsp.servers]
python = ["sh", "-c", "evil"]
"""


def setup(tmp_path: Path, user: str = "") -> tuple[Path, Path, TrustStore]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".toolhost.toml").write_text(WORKSPACE_TOML)
    user_file = tmp_path / "config" / "toolhost" / "config.toml"
    user_file.parent.mkdir(parents=True)
    user_file.write_text(user)
    return root, user_file, TrustStore(tmp_path / "state")


def load(root: Path, user_file: Path, trust: TrustStore, init=None, section=None):
    return load_config(
        init_options=init, client_section=section, roots=[root], user_config=user_file, trust=trust
    )


def test_untrusted_workspace_can_only_tighten(tmp_path: Path) -> None:
    root, user_file, trust = setup(tmp_path)
    loaded = load(root, user_file, trust)
    policy = loaded.config.policy
    assert not loaded.workspace_trusted
    assert policy.mode == "default"
    assert policy.allow == []
    assert policy.deny == ["bash(rm:*)"]
    assert policy.unattended == "deny"
    assert policy.read_only_commands == []
    assert loaded.config.lsp.servers == {}
    joined = "\n".join(loaded.notices)
    for entry in ["policy.mode", "Edit(src/**)", "unattended", "read_only_commands", "[lsp]"]:
        assert entry in joined


def test_a_trusted_workspace_does_not_approve_its_config_file(tmp_path: Path) -> None:
    """The client's workspace trust and the user's trusted_roots mean "project code may
    run"; the agent can write .toolhost.toml there, so its loosening entries wait for the
    user's approval of its exact content."""
    root, user_file, trust = setup(tmp_path)
    by_client = load(root, user_file, trust, init={"workspaceTrusted": True})
    assert by_client.workspace_trusted and by_client.config.lsp.project_servers
    assert by_client.config.policy.mode == "default"
    assert by_client.config.policy.allow == []
    user_file.write_text(f'[policy]\ntrusted_roots = ["{root}"]\n')
    by_user = load(root, user_file, trust)
    assert by_user.workspace_trusted and by_user.config.policy.mode == "default"
    (found,) = by_user.workspace_files
    assert not found.trusted and found.reason == "new file, not yet approved"
    assert "policy.mode = 'bypass'" in found.ignored


def test_approved_content_applies_until_it_changes(tmp_path: Path) -> None:
    root, user_file, trust = setup(tmp_path)
    path = root / ".toolhost.toml"
    trust.approve_config(root, path, hashlib.sha256(path.read_bytes()).hexdigest())
    approved = load(root, user_file, trust)
    assert approved.config.policy.mode == "bypass"
    assert approved.config.policy.allow == ["Edit(src/**)"]
    assert approved.config.lsp.servers == {"python": ["sh", "-c", "evil"]}
    assert approved.workspace_files[0].trusted and approved.notices == []
    # One more byte (the agent's line) and nothing loosening applies any more.
    path.write_text(WORKSPACE_TOML + '[shell]\nsandbox = "off"\n')
    changed = load(root, user_file, trust)
    assert changed.config.policy.mode == "default"
    assert changed.config.shell.sandbox == "workspace-write"
    assert changed.config.policy.deny == ["bash(rm:*)"]  # tightening entries still apply
    assert changed.workspace_files[0].reason == "changed since you approved it"
    assert "shell.sandbox = 'off'" in changed.workspace_files[0].ignored


def test_rules_written_by_allow_always_are_trusted(tmp_path: Path) -> None:
    root, user_file, trust = setup(tmp_path)
    persist_allow_rule(root, "write_file(docs/**)", trust)
    text = (root / ".toolhost.toml").read_text()
    assert "# team policy -- keep this comment" in text
    assert "# loosening: needs trust" in text
    assert tomllib.loads(text)["policy"]["allow"] == ["Edit(src/**)", "write_file(docs/**)"]
    loaded = load(root, user_file, trust)
    assert loaded.config.policy.allow == ["write_file(docs/**)"]
    # A rule the repository added by itself stays ignored.
    assert any("Edit(src/**)" in notice for notice in loaded.notices)


def test_persist_creates_the_file_and_does_not_duplicate(tmp_path: Path) -> None:
    trust = TrustStore(tmp_path / "state")
    persist_allow_rule(tmp_path, "bash(npm test)", trust)
    persist_allow_rule(tmp_path, "bash(npm test)", trust)
    assert tomllib.loads((tmp_path / ".toolhost.toml").read_text()) == {
        "policy": {"allow": ["bash(npm test)"]}
    }
    assert trust.is_recorded(tmp_path, "bash(npm test)")
    assert not trust.is_recorded(tmp_path / "other", "bash(npm test)")


def test_precedence_and_rule_accumulation(tmp_path: Path) -> None:
    root, user_file, trust = setup(
        tmp_path, '[policy]\nallow = ["bash(ls)"]\napproval_timeout_seconds = 9\n'
    )
    loaded = load(
        root,
        user_file,
        trust,
        init={"policy": {"approvalTimeoutSeconds": 7, "deny": ["Edit(secret/**)"]}},
        section={"policy": {"approvalTimeoutSeconds": 8, "mode": "acceptEdits"}},
    )
    policy = loaded.config.policy
    assert policy.approval_timeout_seconds == 7
    assert policy.mode == "acceptEdits"
    assert policy.allow == ["bash(ls)"]
    assert policy.deny == ["bash(rm:*)", "Edit(secret/**)"]
    assert loaded.sources[0] == "initializationOptions"


def test_invalid_entries_become_problems_never_crashes(tmp_path: Path) -> None:
    root, user_file, trust = setup(tmp_path, "this is = = not toml")
    loaded = load(
        root,
        user_file,
        trust,
        init={"policy": {"mode": "yolo", "allow": "Edit"}, "nonsense": {}},
    )
    joined = "\n".join(loaded.problems)
    assert "invalid TOML" in joined
    assert "policy.mode" in joined and "policy.allow" in joined and "nonsense" in joined
    assert loaded.config.policy.mode == "default"


def did_call(
    call_id: str, tool: str, decision: str, paths: list[str], digest: str
) -> DidCallParams:
    """A finished call's record, as the listeners receive it."""
    return DidCallParams(
        call_id=call_id,
        session="s",
        tool=tool,
        decision=decision,
        rule=None,
        is_error=False,
        code=None,
        duration_ms=1.5,
        paths=paths,
        arguments_digest=digest,
    )


def test_audit_lines_and_rotation(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "state", max_bytes=600, keep=2)
    for index in range(12):
        audit.write(did_call(f"c-{index}", "edit_file", "allow_once", ["/ws/a"], f"{index:016x}"))
    files = sorted(p.name for p in (tmp_path / "state").iterdir())
    assert files == ["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2"]
    for name in files:
        assert (tmp_path / "state" / name).stat().st_size <= 600
    last = json.loads((tmp_path / "state" / "audit.jsonl").read_text().splitlines()[-1])
    assert last["callId"] == "c-11" and last["paths"] == ["/ws/a"] and last["outcome"] == "ok"


def test_two_servers_share_one_audit_log_through_its_rotations(tmp_path: Path) -> None:
    """Each log stays open between lines; one filled and rotated by the other server is
    left for the new file at the next line: every line is kept once, no file over the size."""
    state = tmp_path / "state"
    first, second = (AuditLog(state, max_bytes=600, keep=9) for _ in range(2))
    for index in range(16):
        audit = first if index % 3 else second
        audit.write(did_call(f"c-{index}", "read_file", "allow", ["/ws/a"], f"{index:016x}"))
    ids = [
        json.loads(line)["callId"]
        for path in sorted(state.iterdir(), reverse=True)
        for line in path.read_text().splitlines()
    ]
    assert sorted(ids) == sorted(f"c-{index}" for index in range(16))
    assert len(list(state.iterdir())) > 2
    assert all(path.stat().st_size <= 600 for path in state.iterdir())


def test_a_deleted_audit_log_is_made_again(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "state")
    audit.write(did_call("c-1", "read_file", "allow", [], "0" * 16))
    shutil.rmtree(tmp_path / "state")
    audit.write(did_call("c-2", "read_file", "allow", [], "0" * 16))
    (line,) = (tmp_path / "state" / "audit.jsonl").read_text().splitlines()
    assert json.loads(line)["callId"] == "c-2"


def test_an_unwritable_audit_folder_is_said_once_without_a_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "state"
    blocked.write_text("a file where the state folder should be")
    listener = AuditListener(AuditLog(blocked))
    record = did_call("c-1", "read_file", "allow", [], "0" * 16)
    with caplog.at_level(logging.WARNING, logger="lsp_server.policy.audit"):
        listener(record)
        listener(record)
    (warning,) = caplog.records
    assert "calls still run, without audit lines" in warning.getMessage()
    assert warning.exc_info is None
