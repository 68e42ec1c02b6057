"""The parts on their own: which names are credentials, what the redactor replaces, what
the sources find (and find again when a file changes), the audit writer's redaction."""

from __future__ import annotations

import json
import os
import random
import string
from pathlib import Path

from lsp_server.fs.workspace import Workspace
from lsp_server.langservers.discovery import ResolvedServer
from lsp_server.policy.audit import AuditLog
from lsp_server.protocol import DidCallParams
from lsp_server.secrets.known import SecretValues
from lsp_server.secrets.names import CredentialNames
from lsp_server.secrets.process_environments import process_secrets
from lsp_server.secrets.redaction import Redactor, Secret, placeholder
from lsp_server.secrets.sources import SecretFiles, dotenv_secrets, file_secrets
from lsp_server.shell.environment import command_environment

KEY = "sk-live-0123456789abcdef"


def test_credential_names() -> None:
    names = CredentialNames()
    for name in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "NPM_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "DB_PASSWORD",
        "SMTP_PASS",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "npm_config__authToken",
        "SENTRY_DSN",
        "client_secret",
    ):
        assert names.is_credential(name), name
    for name in ("PATH", "HOME", "PWD", "OLDPWD", "AWS_REGION", "LANG", "TOKENIZERS_PARALLELISM"):
        assert not names.is_credential(name), name
    assert names.is_credential("DATABASE_URL", "postgres://app:hunter22@db/app")
    assert not names.is_credential("DATABASE_URL", "postgres://db/app")


def test_command_environment_leaves_credentials_out_unless_passed() -> None:
    base = {"PATH": "/bin", "OPENAI_API_KEY": KEY, "MY_ORG_THING": "x", "AWS_REGION": "eu"}
    env = command_environment("m", base)
    assert "OPENAI_API_KEY" not in env and env["PATH"] == "/bin" and env["AWS_REGION"] == "eu"
    names = CredentialNames.of(["OPENAI_API_KEY"], ["my_org_*"])
    env = command_environment("m", base, names)
    assert env["OPENAI_API_KEY"] == KEY and "MY_ORG_THING" not in env


def test_redactor_names_each_value_and_its_printed_forms() -> None:
    redactor = Redactor(
        [Secret(KEY, "OPENAI_API_KEY"), Secret('a"b$c\\d-long', ".env:ODD"), Secret("short", "X")]
    )
    assert redactor.redact(f"k={KEY};") == "k=‹secret:OPENAI_API_KEY›;"
    assert redactor.redact(json.dumps({"v": 'a"b$c\\d-long'})) == '{"v": "‹secret:.env:ODD›"}'
    assert redactor.redact('export X="a\\"b\\$c\\\\d-long"') == 'export X="‹secret:.env:ODD›"'
    assert redactor.redact("short stays") == "short stays"
    text = "nothing here"
    assert redactor.redact(text) is text


def test_a_value_inside_a_longer_one_never_splits_it() -> None:
    redactor = Redactor([Secret("abcdefgh12", "SHORT_KEY"), Secret("xxabcdefgh12yy", "LONG")])
    assert redactor.redact("xxabcdefgh12yy abcdefgh12") == "‹secret:LONG› ‹secret:SHORT_KEY›"


def test_token_values_are_found_wherever_they_stand() -> None:
    """With many token values (base64, hex, `sk-...`: a key file's lines), they are looked
    for in the text's runs of token characters of their length class only: a value at
    either end of a run, inside a longer run, at a class's least length, or beside other
    values is replaced all the same, as the plain search over the whole text would."""
    rng = random.Random(43)
    alphabet = string.ascii_letters + string.digits + "+/=_-"
    lengths = [8, 15, 16, 31, 32, 63, 64, 65, 200] * 40
    values = ["".join(rng.choice(alphabet) for _ in range(n)) for n in lengths]
    secrets = [Secret(value, f"K{i}") for i, value in enumerate(values)]
    secrets.append(Secret("pass word.with:dots", "ODD"))
    redactor = Redactor(secrets)
    gaps = [" ", "\n", ".", "/", "a", "Zz9+", "é", ""]
    assert len(redactor._token_classes) == 5  # the runs are searched (not the plain way)
    for _ in range(300):
        chosen = rng.sample(range(len(secrets)), rng.randint(0, 4))
        pieces = []
        for i in chosen:
            pieces += [rng.choice(gaps), secrets[i].value, rng.choice(gaps)]
        text = "".join(pieces)
        redacted = redactor.redact(text)
        for i in chosen:
            assert secrets[i].value not in redacted, (text, redacted)
            assert placeholder(secrets[i].name) in redacted, (text, redacted)


def test_dotenv_values_that_look_secret() -> None:
    text = (
        "export DB_PASSWORD='pw with space'\n"
        "NODE_ENV=production\n"
        "API_URL=http://localhost:3000\n"
        "SESSION=Zq8v3KcN1xW0\n"
        "# COMMENTED=Zq8v3KcN1xW0yyy\n"
        "DATABASE_URL=postgres://app:s3cr3t-pw@db/app\n"
    )
    found = {(s.name, s.value) for s in dotenv_secrets(".env", text, CredentialNames())}
    assert found == {
        (".env:DB_PASSWORD", "pw with space"),
        (".env:SESSION", "Zq8v3KcN1xW0"),
        (".env:DATABASE_URL", "postgres://app:s3cr3t-pw@db/app"),
        (".env:DATABASE_URL", "s3cr3t-pw"),
    }


def test_key_files_give_their_long_lines_and_values() -> None:
    text = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE\n"
        "-----END OPENSSH PRIVATE KEY-----\n"
        "machine example.com login me password n3tRc-Secret\n"
        "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnop\n"
    )
    values = {s.value for s in file_secrets("id_test", text)}
    assert values == {
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE",
        "n3tRc-Secret",
        "npm_abcdefghijklmnop",
        "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnop",  # a line without spaces
    }


def test_files_are_found_again_when_they_change(tmp_path: Path) -> None:
    clock = [0.0]
    workspace = Workspace([tmp_path])
    files = SecretFiles(
        workspace, CredentialNames(), clock=lambda: clock[0], background=lambda walk: walk()
    )
    assert files.refresh() == ()
    (tmp_path / ".env").write_text("API_TOKEN=first-value-1\n")
    assert [s.value for s in files.refresh()] == ["first-value-1"]  # the root changed
    same = files.refresh()
    assert files.refresh() is same  # nothing changed: the redactor is not rebuilt
    (tmp_path / ".env").write_text("API_TOKEN=second-value-22\n")
    assert [s.value for s in files.refresh()] == ["second-value-22"]  # its stat changed
    deep = tmp_path / "services" / "api"
    deep.mkdir(parents=True)
    (deep / ".env.local").write_text("API_TOKEN=third-value-333\n")
    clock[0] += 60  # the periodic walk finds files below the roots
    found = {s.name for s in files.refresh()}
    assert found == {".env:API_TOKEN", "services/api/.env.local:API_TOKEN"}
    outside = tmp_path.parent / "outside.txt"
    outside.write_text("A=not-a-secret-of-this-workspace\n")
    (tmp_path / ".env.link").symlink_to(outside)
    clock[0] += 60
    assert all("outside" not in s.value for s in files.refresh())  # links are not followed


def test_secret_values_join_environment_and_files(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("DB_PASSWORD=from-the-file-1\n")
    values = SecretValues(Workspace([tmp_path]), environ={"GH_TOKEN": KEY, "HOME": "/home/me"})
    assert values.redact(f"{KEY} from-the-file-1 /home/me") == (
        "‹secret:GH_TOKEN› ‹secret:.env:DB_PASSWORD› /home/me"
    )
    assert values.redact_json({"a": [KEY, 3]}) == {"a": ["‹secret:GH_TOKEN›", 3]}
    # A credential variable that names a file: the path is no secret.
    path = str(tmp_path / ".env")
    values = SecretValues(None, environ={"GOOGLE_APPLICATION_CREDENTIALS": path})
    assert values.redact(path) == path


def test_audit_lines_hold_no_secret(tmp_path: Path) -> None:
    values = SecretValues(None, environ={"OPENAI_API_KEY": KEY})
    audit = AuditLog(tmp_path, redact=values.redact_known)
    record = DidCallParams(
        call_id="c1",
        session="s",
        tool="read_file",
        decision="allow",
        rule=f"Bash(echo {KEY})",
        is_error=False,
        code=None,
        duration_ms=1.0,
        paths=[f"/ws/{KEY}.txt"],
    )
    audit.write(record)
    audit.close()
    line = (tmp_path / "audit.jsonl").read_text()
    assert KEY not in line
    assert json.loads(line)["paths"] == ["/ws/‹secret:OPENAI_API_KEY›.txt"]
    assert os.stat(tmp_path / "audit.jsonl").st_mode & 0o777 == 0o600


def test_language_servers_get_no_credential() -> None:
    """A language server runs project code the agent may write (build.rs, proc macros)."""
    server = ResolvedServer(row=None, command=("/usr/bin/true",), source="PATH", candidate=None)  # type: ignore[arg-type]
    env = server.child_env({"PATH": "/bin", "GITHUB_TOKEN": KEY, "LANG": "C.UTF-8"})
    assert "GITHUB_TOKEN" not in env and env["LANG"] == "C.UTF-8"


def test_the_user_s_credential_files_are_known(tmp_path: Path) -> None:
    """A sandboxed command may read them (the sandbox stops writes, not reads)."""
    home, root = tmp_path / "home", tmp_path / "ws"
    (home / ".aws").mkdir(parents=True)
    (home / ".config" / "gh").mkdir(parents=True)
    (home / ".claude").mkdir()
    root.mkdir()
    (home / ".aws" / "credentials").write_text(
        "[default]\naws_access_key_id = AKIAABCDEFGH12345678\n"
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
    )
    (home / ".config" / "gh" / "hosts.yml").write_text(
        "github.com:\n    oauth_token: gho_16C7e42F292c6912E7710c838347Ae178B4a\n    user: me\n"
    )
    (home / ".claude" / ".credentials.json").write_text(
        '{"claudeAiOauth":{"accessToken":"sk-ant-oat01-AbC123dEf456","expiresAt":1}}'
    )
    values = SecretValues(Workspace([root]), environ={"HOME": str(home)})
    shown = values.redact(
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY gho_16C7e42F292c6912E7710c838347Ae178B4a "
        "sk-ant-oat01-AbC123dEf456 user: me"
    )
    assert shown == (
        "‹secret:~/.aws/credentials› ‹secret:~/.config/gh/hosts.yml› "
        "‹secret:~/.claude/.credentials.json› user: me"
    )


def test_other_processes_credentials_are_known(tmp_path: Path) -> None:
    """With the sandbox off a command can read /proc/*/environ of the user's processes."""
    proc = tmp_path / "proc"
    (proc / "123").mkdir(parents=True)
    (proc / "123" / "environ").write_bytes(
        b"PATH=/bin\0ANTHROPIC_API_KEY=sk-ant-api03-AbCdEf123456\0AWS_CA_BUNDLE=/\0"
    )
    (proc / "self").mkdir()
    found = process_secrets(CredentialNames(), proc)
    assert found == (Secret("sk-ant-api03-AbCdEf123456", "ANTHROPIC_API_KEY"),)
