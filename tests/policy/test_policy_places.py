"""Where shell commands read and write, on a real tmp_path workspace: secrets, outside
files and policy files (issue 20 items 6, 8 and 11; the e2e file drives the server)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lsp_server.config.layers import load_config
from lsp_server.config.trust import TrustStore
from lsp_server.fs.workspace import Workspace
from lsp_server.policy.commands.command_paths import Places
from lsp_server.policy.engine import CallFacts, PathFact, PolicyEngine, RuleSet
from lsp_server.policy.readonly_commands import ReadOnlyClassifier
from lsp_server.policy.suggest import risk_level, suggested_rules


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a = 1\n")
    (root / ".env").write_text("KEY=1\n")
    (root / "keys").mkdir()
    (root / "keys" / "server.pem").write_text("pem\n")
    (tmp_path / "outside.txt").write_text("out\n")
    (root / "out-link").symlink_to(tmp_path / "outside.txt")
    return root


def engine(root: Path, mode: str = "default") -> PolicyEngine:
    workspace = Workspace([root])
    places = Places(
        roots=(root,),
        is_secret=workspace.is_secret,
        protected=frozenset({root / ".toolhost.toml"}),
    )
    return PolicyEngine(RuleSet(), mode, ReadOnlyClassifier(places=places))  # type: ignore[arg-type]


def bash(command: str, cwd: Path) -> CallFacts:
    return CallFacts(tool="bash", kind="shell", read_only=False, command=command, cwd=cwd)


@pytest.mark.parametrize(
    "command",
    [
        "cat .env",
        "cat .e*",
        "cat .{e,x}nv",
        "cat keys/*.pem",
        "grep KEY .env",
        "wc -l < .env",
        "cat out-link",
        "cat ../outside.txt",
        "cat /etc/hostname",
        "cat ~/.profile",
        "cat $HOME/.profile",
        "grep -r x /etc",
        "git show HEAD:.env",
        "git -C /tmp log",
        "head -c 10 /proc/self/environ",
        "sed -n 1p --file=/etc/hostname",
    ],
)
def test_reads_of_secrets_and_outside_files_are_not_plain_reads(root: Path, command: str) -> None:
    policy = engine(root)
    assert policy.decide(bash(command, root)).action == "ask", command
    assert engine(root, "readOnly").decide(bash(command, root)).action == "deny", command


def test_reads_inside_stay_plain_and_follow_the_session_folder(root: Path) -> None:
    policy = engine(root)
    for command in ("cat src/a.py", "ls -la src", "grep -n a src/*.py", "cat missing.env.txt"):
        assert policy.decide(bash(command, root)).action == "allow", command
    assert policy.decide(bash("cat a.py", root / "src")).action == "allow"
    assert policy.decide(bash("cat ../.env", root / "src")).action == "ask"
    assert policy.decide(bash("cat /dev/null", root)).action == "allow"


@pytest.mark.parametrize(
    "command",
    [
        "echo x >> .toolhost.toml",
        "cp src/a.py .toolhost.toml",
        "sed -i s/a/b/ .toolhost.toml",
        "rm ./.toolhost.toml",
        "cp x sub/../.toolhost.toml",
        "mv .toolhost.* elsewhere",
    ],
)
def test_policy_files_always_ask_even_in_bypass(root: Path, command: str) -> None:
    (root / ".toolhost.toml").write_text("")
    decision = engine(root, "bypass").decide(bash(command, root))
    assert decision.action == "ask" and decision.always_ask, (command, decision)


def test_file_tools_writing_a_policy_file_ask_in_accept_edits(root: Path) -> None:
    write = CallFacts(
        tool="write_file",
        kind="edit",
        read_only=False,
        paths=(PathFact(root / ".toolhost.toml", ".toolhost.toml", "write"),),
    )
    other = CallFacts(
        tool="write_file",
        kind="edit",
        read_only=False,
        paths=(PathFact(root / "notes.md", "notes.md", "write"),),
    )
    policy = engine(root, "acceptEdits")
    assert policy.decide(write).always_ask
    assert policy.decide(other).action == "allow"
    assert engine(root, "bypass").decide(write).action == "ask"
    assert engine(root).decide(bash("cat .toolhost.toml", root)).action == "allow"


def test_untrusted_layer_cannot_negate_secret_patterns(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".toolhost.toml").write_text(
        '[workspace]\nsecret_patterns = ["!.env", " !*.pem", "*.secret"]\n'
    )
    loaded = load_config(
        init_options=None,
        client_section=None,
        roots=[root],
        user_config=tmp_path / "none.toml",
        trust=TrustStore(tmp_path / "state"),
    )
    assert loaded.config.workspace.secret_patterns == ["*.secret"]
    assert loaded.workspace_files[0].ignored == [
        "workspace.secret_patterns entry '!.env'",
        "workspace.secret_patterns entry ' !*.pem'",
    ]
    found = loaded.workspace_files[0]
    TrustStore(tmp_path / "state").approve_config(root, found.path, found.sha256)
    trusted = load_config(
        init_options=None,
        client_section=None,
        roots=[root],
        user_config=tmp_path / "none.toml",
        trust=TrustStore(tmp_path / "state"),
    )
    assert "!.env" in trusted.config.workspace.secret_patterns


_SHELL_ALPHABET = "ab .~*?[]{},$`'\"\\|&;<>()=-/\n\t!#:0123456789"


@given(st.text(alphabet=_SHELL_ALPHABET, max_size=80))
@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@example("< touch")
@example("0 ~0")
def test_any_command_line_gets_a_decision(root: Path, command: str) -> None:
    for mode in ("default", "bypass", "readOnly"):
        policy = engine(root, mode)
        facts = bash(command, root)
        assert policy.decide(facts).action in ("allow", "ask", "deny")
        assert risk_level(facts, policy) in ("low", "medium", "high")
        assert isinstance(suggested_rules(facts, policy), list)


def test_many_braces_expand_boundedly(root: Path) -> None:
    # 2**40 names: the first 256 are checked, and the rest could hide `.env` (issue 41).
    decision = engine(root).decide(bash("cat " + "{a,b}" * 40, root))
    assert decision.action == "ask"
    assert engine(root).decide(bash("cat " + "{a,b}" * 8, root)).action == "allow"


def test_recursive_searches_ask_when_the_tree_holds_secrets_or_links_out(root: Path) -> None:
    (root / "sub").mkdir()
    (root / "sub" / ".env").write_text("KEY=1\n")
    (root / "sub" / "a.txt").write_text("a\n")
    policy = engine(root)

    def action(command: str) -> str:
        return policy.decide(bash(command, root)).action

    assert action("grep -rn KEY .") == "ask"  # reads .env
    assert action("grep -r KEY sub") == "ask"
    assert action("grep --recursive KEY sub") == "ask"
    assert action("grep -rn a src") == "allow"
    assert action("grep -n a src/a.py") == "allow"
    assert action("rg KEY sub") == "allow"  # rg skips hidden files
    assert action("rg --hidden KEY sub") == "ask"
    assert action("rg -uu KEY sub") == "ask"
    assert action("rg PRIVATE") == "ask"  # keys/server.pem is not hidden
    assert action("rg -g '*.py' a src") == "allow"
    (root / "src" / "out").symlink_to(root.parent)
    assert action("grep -r a src") == "allow"  # -r does not follow links
    assert action("grep -R a src") == "ask"
    assert action("rg -L a src") == "ask"


def test_rg_is_judged_by_the_files_it_would_search(root: Path) -> None:
    (root / "lib" / "vendored").mkdir(parents=True)
    (root / "lib" / ".ignore").write_text("vendored/\n")
    (root / "lib" / "vendored" / "test.pem").write_text("pem\n")
    (root / "lib" / "code.py").write_text("x = 1\n")
    policy = engine(root)
    assert policy.decide(bash("rg x lib", root)).action == "allow"  # rg skips vendored/
    assert policy.decide(bash("rg --no-ignore x lib", root)).action == "ask"
    assert policy.decide(bash("grep -r x lib", root)).action == "ask"


def test_the_user_config_and_trust_store_are_protected_from_shell_writes(
    root: Path, tmp_path: Path
) -> None:
    user_config = tmp_path / "config" / "toolhost" / "config.toml"
    trust_store = tmp_path / "state" / "trusted-rules.json"
    places = Places.of_workspace(Workspace([root]), user_config, trust_store, ".toolhost.toml")
    policy = PolicyEngine(RuleSet(), "bypass", ReadOnlyClassifier(places=places))  # type: ignore[arg-type]
    for command in (
        f"cp x {trust_store}",
        f"echo 'allow = [\"Bash\"]' >> {user_config}",
        f"cd {user_config.parent} && echo x > config.toml",
        f"rm -rf {trust_store.parent}",
    ):
        decision = policy.decide(bash(command, root))
        assert decision.action == "ask" and decision.always_ask, (command, decision)
    assert policy.decide(bash(f"cp x {tmp_path / 'elsewhere.txt'}", root)).action == "allow"


def test_only_config_that_reads_run_makes_git_reads_ask(root: Path) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q"], cwd=root, check=True)

    def git_config(*args: str) -> None:
        subprocess.run(["git", "config", *args], cwd=root, check=True)

    policy = engine(root)

    def action(command: str) -> str:
        return policy.decide(bash(command, root)).action

    git_config("core.hooksPath", ".husky/_")  # what husky sets: hooks, not reads
    git_config("core.editor", "vim")
    git_config("credential.helper", "store")
    assert action("git status") == "allow"
    assert action("git log -n 1") == "allow"
    assert action("git remote show origin") == "ask"  # talks to the remote: the helper runs
    hook = root / ".husky" / "_" / "post-index-change"
    hook.parent.mkdir(parents=True)
    hook.write_text("#!/bin/sh\n")
    hook.chmod(0o755)
    assert action("git status") == "ask"
    hook.unlink()
    assert action("git status") == "allow"
    git_config("diff.img.textconv", "sh -c x")
    assert action("git diff") == "ask"


def test_git_grep_is_judged_by_the_files_git_tracks(root: Path) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "src/a.py"], cwd=root, check=True)
    policy = engine(root)
    assert policy.decide(bash("git grep -n a", root)).action == "allow"
    assert policy.decide(bash("git grep --untracked a", root)).action == "ask"  # .env
    subprocess.run(["git", "add", "-f", ".env"], cwd=root, check=True)
    assert policy.decide(bash("git grep -n KEY", root)).action == "ask"
    assert policy.decide(bash("git log -n 1 grep", root)).action == "allow"


@pytest.mark.parametrize(
    "command", ["rm -rf /", "rm -r ..", "sudo rm -fR -- /", "rm --recursive /"]
)
def test_a_recursive_delete_of_what_holds_the_workspace_names_that_and_offers_no_rule(
    root: Path, command: str
) -> None:
    """`rm -rf /` asks in every mode because it would delete the workspace, says so (not
    "outside the workspace ... the sandbox does not stop reads") and suggests no rule."""
    policy = engine(root, "bypass")
    facts = bash(command, root)
    decision = policy.decide(facts)
    assert decision.action == "ask" and decision.always_ask, decision
    assert "recursively, which holds the whole workspace" in decision.reason
    assert "does not stop reads" not in decision.reason
    assert suggested_rules(facts, policy) == [] or policy.forced_ask(facts) is not None
    # Deleting inside the workspace is no such case.
    assert policy.forced_ask(bash("rm -rf build", root)) is None
