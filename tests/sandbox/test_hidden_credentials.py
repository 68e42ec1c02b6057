"""The user's credential files outside the workspace are hidden from sandboxed commands
(sandbox/hidden.py), so that no encoding of them (base64, hex, split) can reach the model,
which redaction could not catch. Real bubblewrap; HOME is a temporary folder holding fake
credential files with random values."""

from __future__ import annotations

import base64
import os
import secrets
import time
from pathlib import Path

import pytest

from lsp_server.cli.doctor import sandbox_section
from lsp_server.config.layers import load_config
from lsp_server.config.trust import TrustStore
from lsp_server.sandbox.bubblewrap import BubblewrapLayout
from lsp_server.sandbox.hidden import HiddenCredentials, find_hidden, listed_paths
from lsp_server.sandbox.plan import SandboxRequest, plan_command
from lsp_server.sandbox.protected import ProtectedPaths
from lsp_server.sandbox.service import SandboxService
from lsp_server.secrets.user_files import USER_CREDENTIAL_FILES, USER_CREDENTIAL_FOLDERS
from lsp_server.shell.runner import RunLimits, run_command
from tests.conftest import missing_part

LIMITS = RunLimits(timeout_seconds=60, kill_grace_seconds=1.0, pipe_wait_seconds=2.0)
HEX = "import os;print(open(os.path.expanduser('~/.netrc')).read().encode().hex())"


def fake_home(home: Path) -> dict[str, str]:
    """Credential files with random values, by name: what no sandboxed command may print."""
    values = {name: secrets.token_hex(16) for name in ("aws", "ssh", "netrc", "git", "gh")}
    files = {
        ".aws/credentials": f"[default]\naws_secret_access_key = {values['aws']}\n",
        ".ssh/id_ed25519": f"-----BEGIN OPENSSH PRIVATE KEY-----\n{values['ssh']}\n",
        ".netrc": f"machine example.com login me password {values['netrc']}\n",
        ".git-credentials": f"https://me:{values['git']}@example.com\n",
        ".config/gh/hosts.yml": f"github.com:\n  oauth_token: {values['gh']}\n",
    }
    for name, content in files.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(content)
    (home / ".ssh" / "known_hosts").write_text("example.com ssh-ed25519 AAAA\n")
    (home / ".bashrc").write_text("# not secret\n")
    return values


def encodings(value: str) -> list[str]:
    raw = value.encode()
    return [value, raw.hex(), base64.b64encode(raw).decode()[:16], value[:8], value[-8:]]


def printed_any(output: str, values: dict[str, str]) -> list[str]:
    return [name for name, value in values.items() for form in encodings(value) if form in output]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


def sandboxed(
    bwrap: str, roots: list[Path], hide: tuple[str, ...] = (), requested: SandboxRequest = "default"
) -> BubblewrapLayout:
    service = SandboxService()
    plan = plan_command("workspace-write", None, requested)
    launcher = service.launcher(plan, roots, ProtectedPaths(), hide=hide)
    if not isinstance(launcher, BubblewrapLayout):
        missing_part("bubblewrap cannot start here")
    return launcher


async def test_sandboxed_commands_print_no_credential_encoded_or_not(
    bwrap: str, home: Path, tmp_path: Path
) -> None:
    values = fake_home(home)
    root = tmp_path / "ws"
    root.mkdir()
    layout = sandboxed(bwrap, [root])
    probes = [
        "cat ~/.aws/credentials",
        "base64 ~/.ssh/id_ed25519",
        f'python3 -c "{HEX}"',
        "od -An -tx1 ~/.git-credentials ~/.config/gh/hosts.yml",
        "ls -a ~/.ssh; cat ~/.ssh/* 2>&1 | xxd | head",
        "tar cf - -C ~ . 2>/dev/null | base64 -w0",
        "split -b 4 ~/.netrc /tmp/part. && cat /tmp/part.*",
    ]
    for probe in probes:
        result = await run_command(probe, root, LIMITS, launcher=layout)
        assert not printed_any(result.output, values), (probe, result.output)
    # Still there, outside the sandbox; and the folders the command sees are empty.
    assert values["aws"] in (home / ".aws" / "credentials").read_text()
    listing = await run_command("ls -A ~/.ssh ~/.aws; cat ~/.bashrc", root, LIMITS, launcher=layout)
    assert "known_hosts" not in listing.output, listing.output
    assert "not secret" in listing.output  # the rest of the home folder is as it was


async def test_the_workspace_env_stays_readable(bwrap: str, home: Path, tmp_path: Path) -> None:
    fake_home(home)
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".env").write_text("DB_PASSWORD=pw-in-the-project-env\n")
    (root / ".netrc").write_text("machine local login me password project-netrc\n")
    result = await run_command(
        "cat .env .netrc",
        root,
        LIMITS,
        launcher=sandboxed(bwrap, [root], hide=(str(root / ".env"),)),
    )
    assert "pw-in-the-project-env" in result.output  # redaction, not hiding, covers it
    assert "project-netrc" in result.output


async def test_sandbox_hide_adds_a_file_and_a_folder(
    bwrap: str, home: Path, tmp_path: Path
) -> None:
    fake_home(home)
    root = tmp_path / "ws"
    root.mkdir()
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "key.txt").write_text("vault-value-123\n")
    (home / ".vault-token").write_text("token-value-456\n")
    layout = sandboxed(bwrap, [root], hide=(str(vault), "~/.vault-token", "~/missing"))
    result = await run_command(
        f"cat {vault}/key.txt ~/.vault-token; ls -A {vault} | wc -l", root, LIMITS, launcher=layout
    )
    assert "vault-value-123" not in result.output
    assert "token-value-456" not in result.output
    assert result.output.rstrip().endswith("0"), result.output  # an empty folder


async def test_a_symlinked_credential_file_is_hidden_by_its_real_path(
    bwrap: str, home: Path, tmp_path: Path
) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "netrc").write_text("machine x login me password linked-value-789\n")
    (home / ".netrc").symlink_to(dotfiles / "netrc")
    root = tmp_path / "ws"
    root.mkdir()
    layout = sandboxed(bwrap, [root])
    assert [h.path for h in layout.hidden] == [(dotfiles / "netrc").resolve()]
    result = await run_command(f"cat ~/.netrc {dotfiles}/netrc", root, LIMITS, launcher=layout)
    assert "linked-value-789" not in result.output


async def test_an_approved_unsandboxed_command_still_reads_them(
    bwrap: str, home: Path, tmp_path: Path
) -> None:
    values = fake_home(home)
    root = tmp_path / "ws"
    root.mkdir()
    layout = sandboxed(bwrap, [root], requested="off")
    assert layout.hidden == ()
    result = await run_command("cat ~/.netrc", root, LIMITS, launcher=layout)
    assert values["netrc"] in result.output  # the bash tool's redaction hides it (e2e test)


def test_nothing_inside_a_root_and_only_what_exists(home: Path, tmp_path: Path) -> None:
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("k\n")
    (home / ".netrc").write_text("n\n")
    listed = listed_paths(str(home), [str(tmp_path / "ws" / ".env"), "~/.nothing"])
    hidden = find_hidden(listed, [tmp_path / "ws"])
    # .ssh as a whole (the key inside it is not bound again); nothing in the root.
    assert {(h.path, h.folder) for h in hidden} == {(home / ".netrc", False), (home / ".ssh", True)}
    assert find_hidden(listed, [home]) == ()  # a home folder the user allowed as a root
    assert set(USER_CREDENTIAL_FOLDERS).isdisjoint(USER_CREDENTIAL_FILES)


def test_the_answer_is_cached_until_a_folder_changes(home: Path, tmp_path: Path) -> None:
    finder = HiddenCredentials()
    root = tmp_path / "ws"
    assert finder.find([root]) == ()
    (home / ".netrc").write_text("n\n")  # the home folder's mtime changes
    assert [h.path for h in finder.find([root])] == [home / ".netrc"]
    (home / ".docker").mkdir()
    (home / ".docker" / "config.json").write_text("{}")
    assert len(finder.find([root])) == 2
    # The cost per command with the answer cached: a stat per folder of the list.
    start = time.perf_counter()
    for _ in range(200):
        finder.find([root])
    per_call = (time.perf_counter() - start) / 200
    print(f"hidden-credentials lookup, cached: {per_call * 1e6:.0f} us per command")
    assert os.environ["HOME"] == str(home)


def test_every_layer_adds_to_sandbox_hide(tmp_path: Path) -> None:
    """A workspace file nobody approved may add (hiding more only tightens); the user's
    file and the editor's settings add too; no layer removes another's entry."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".toolhost.toml").write_text('[shell]\nsandbox_hide = ["~/.vault-token"]\n')
    user = tmp_path / "config.toml"
    user.write_text('[shell]\nsandbox_hide = ["/srv/keys"]\n')
    loaded = load_config(
        init_options={"shell": {"sandbox_hide": []}},
        client_section=None,
        roots=[root],
        user_config=user,
        trust=TrustStore(tmp_path / "state"),
    )
    assert sorted(loaded.config.shell.sandbox_hide) == ["/srv/keys", "~/.vault-token"]
    assert not any("sandbox_hide" in p for p in loaded.problems), loaded.problems


def test_doctor_names_what_sandboxed_commands_do_not_see(
    bwrap: str, home: Path, tmp_path: Path
) -> None:
    fake_home(home)
    root = tmp_path / "ws"
    root.mkdir()
    shown = sandbox_section(root)
    assert "hidden from sandboxed commands" in shown, shown
    assert str(home / ".ssh") in shown
    assert str(home / ".netrc") in shown


async def test_network_for_one_command_keeps_them_hidden(
    bwrap: str, home: Path, tmp_path: Path
) -> None:
    """`sandbox: "network"` (asked) is still the sandbox: with the whole network, a readable
    key would be the worst case."""
    values = fake_home(home)
    root = tmp_path / "ws"
    root.mkdir()
    layout = sandboxed(bwrap, [root], requested="network")
    assert layout.network
    result = await run_command("base64 ~/.ssh/id_ed25519 ~/.netrc", root, LIMITS, launcher=layout)
    assert not printed_any(result.output, values), result.output
