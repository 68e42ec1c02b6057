"""Writes to files that make other programs run code always ask, in every mode, and say
what the file controls (issue 41 item 2); on a real tmp_path workspace, the engine alone
(the e2e file drives the server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_server.fs.workspace import Workspace
from lsp_server.policy.commands.command_paths import Places
from lsp_server.policy.engine import CallFacts, PathFact, PolicyEngine, RuleSet
from lsp_server.policy.protected_writes import ProtectedWrites
from lsp_server.policy.readonly_commands import ReadOnlyClassifier
from lsp_server.policy.rules import parse_rule
from lsp_server.sandbox.protected import BUILT_IN, ProtectedPaths
from lsp_server.shellparse.shell_words import split_command


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a = 1\n")
    return root


def places(root: Path, extra: tuple[str, ...] = ()) -> Places:
    return Places(
        roots=(root,),
        is_secret=Workspace([root]).is_secret,
        protected_paths=ProtectedPaths.with_extra(extra),
    )


def engine(root: Path, mode: str, allow: tuple[str, ...] = ()) -> PolicyEngine:
    rules = RuleSet(allow=tuple(parse_rule(r) for r in allow))
    return PolicyEngine(rules, mode, ReadOnlyClassifier(places=places(root)))  # type: ignore[arg-type]


def write(root: Path, relative: str) -> CallFacts:
    real = root / relative
    return CallFacts(
        tool="write_file",
        kind="edit",
        read_only=False,
        paths=(PathFact(real, relative, "write"),),
    )


def bash(command: str, cwd: Path) -> CallFacts:
    return CallFacts(tool="bash", kind="shell", read_only=False, command=command, cwd=cwd)


@pytest.mark.parametrize(
    "relative",
    [
        ".vscode/settings.json",
        ".vscode/tasks.json",
        ".envrc",
        ".git/config",
        ".git/hooks/pre-commit",
        "sub/.git/config",
        ".npmrc",
        ".venv/pip.conf",
        ".dir-locals.el",
        ".nvim.lua",
        ".idea/workspace.xml",
        ".claude/settings.json",
        ".mcp.json",
        ".toolhost.toml",
        "packages/web/.yarnrc.yml",
    ],
)
@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypass"])
def test_a_writer_always_asks_and_says_what_the_file_controls(
    root: Path, relative: str, mode: str
) -> None:
    decision = engine(root, mode, allow=("Edit", "write_file")).decide(write(root, relative))
    assert decision.action == "ask" and decision.always_ask, (relative, decision)
    entry = ProtectedPaths().match(Path(relative).parts)
    assert entry is not None and entry.controls in decision.reason
    assert relative in decision.reason


def test_ordinary_files_and_look_alikes_are_not_protected(root: Path) -> None:
    policy = engine(root, "acceptEdits")
    for relative in ("src/a.py", ".gitignore", "x.git", "docs/vscode.md", ".env.example"):
        assert policy.decide(write(root, relative)).action == "allow", relative


def test_deny_still_wins(root: Path) -> None:
    rules = RuleSet(deny=(parse_rule("Edit(.vscode/**)"),))
    policy = PolicyEngine(rules, "bypass", ReadOnlyClassifier(places=places(root)))
    assert policy.decide(write(root, ".vscode/settings.json")).action == "deny"


def test_configured_paths_add_to_the_list(root: Path) -> None:
    extra = places(root, ("tools/run-on-open.sh", "*.hook", "!.git"))
    policy = PolicyEngine(RuleSet(), "bypass", ReadOnlyClassifier(places=extra))
    for relative in ("tools/run-on-open.sh", "a/b/x.hook"):
        decision = policy.decide(write(root, relative))
        assert decision.action == "ask" and decision.always_ask, relative
        assert "workspace.protected_paths" in decision.reason
    assert policy.decide(write(root, ".git/config")).always_ask  # "!.git" removes nothing
    assert policy.decide(write(root, "run-on-open.sh")).action == "allow"  # anchored


UNSANDBOXED_ESCALATIONS = [
    "git init -q && git config core.fsmonitor 'touch PWNED'",
    "git config core.fsmonitor 'touch PWNED'",
    "git config user.name x --get",  # git stops at the key: a set
    "git config --global core.fsmonitor x",
    "git -C sub init",
    "mkdir .vscode && echo {} > .vscode/tasks.json",
    "echo x > .envrc",
    "cd src && echo x >> ../.envrc",
    "cp notes.md .npmrc",
    "python3 -c \"open('.toolhost.toml','w')\"",
    "n=.toolhost.toml; echo W3BvbGljeV0K | base64 -d > $n",
    'echo x > "$TARGET"',
    "node -e \"require('fs').writeFileSync('.vscode/settings.json','{}')\"",
    "bash -c 'echo x > .claude/settings.local.json'",
    "printf '[global]\\n' | tee .venv/pip.conf",
]


@pytest.mark.parametrize("command", UNSANDBOXED_ESCALATIONS)
def test_unsandboxed_commands_that_write_one_ask_in_bypass(root: Path, command: str) -> None:
    decision = engine(root, "bypass", allow=("Bash",)).decide(bash(command, root))
    assert decision.action == "ask" and decision.always_ask, (command, decision)
    assert "always asks" in decision.reason


def test_plain_commands_still_run_in_bypass(root: Path) -> None:
    policy = engine(root, "bypass")
    for command in (
        "echo x > notes.txt",
        "git status",
        "git clone --help",
        "cat .envrc",
        "git config --get user.name",
        "git config --global --list",
    ):
        assert policy.decide(bash(command, root)).action == "allow", command


def _command_reason(root: Path, command: str, sandboxed: bool) -> str | None:
    segments = split_command(command).segments
    return ProtectedWrites(places(root)).command_reason(segments, root, sandboxed)


def test_in_the_sandbox_only_what_it_does_not_hold_asks(root: Path) -> None:
    (root / "sub").mkdir()
    # Held by the sandbox (placeholders at the top of the root): no need to ask.
    for command in (
        "echo x > .envrc",
        "mkdir .vscode",
        "tar czf out.tgz --exclude=.git .",
        'echo x > "$TARGET"',
        "git init -q",
    ):
        assert _command_reason(root, command, sandboxed=True) is None, command
        assert _command_reason(root, command, sandboxed=False) is not None, command
    # Missing names below the top are not held: they ask even in the sandbox.
    for command in (
        "echo x > sub/.envrc",
        "git init -q sub",
        "cp x sub/.mcp.json",
        "mkdir new && cd new && git init -q",
    ):
        reason = _command_reason(root, command, sandboxed=True)
        assert reason is not None, command
    (root / "sub" / ".envrc").write_text("")  # existing one folder down: bound read-only
    assert _command_reason(root, "echo x > sub/.envrc", sandboxed=True) is None


def test_every_built_in_entry_says_what_it_controls() -> None:
    for entry in BUILT_IN:
        assert entry.controls and len(entry.controls) < 160, entry
    names = ProtectedPaths().names()
    for required in (".toolhost.toml", ".git", ".vscode", ".envrc", ".npmrc", "pip.conf"):
        assert required in names
