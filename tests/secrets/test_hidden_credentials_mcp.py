"""`toolhost mcp` with HOME holding fake credential files: a sandboxed command that reads
them (plain, base64, hex) prints no value, since the sandbox hides them (redaction could
not catch an encoding); the workspace's .env stays readable (redacted as before); a path in
shell.sandbox_hide is hidden too; a command run outside the sandbox still reads them, and
its result shows placeholders."""

from __future__ import annotations

import base64
import json
import os
import secrets
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require_program
from tests.mcp.clients import raw_mcp
from tests.secrets.probes import DB_PASSWORD, make_workspace, user_config
from tests.secrets.test_secrets_mcp import call, text

pytestmark = pytest.mark.timeout(300)

HEX = "import os;print(open(os.path.expanduser('~/.netrc')).read().encode().hex())"


def forms(value: str) -> list[str]:
    raw = value.encode()
    return [value, raw.hex(), base64.b64encode(raw).decode()[:16]]


async def test_sandboxed_commands_cannot_print_the_users_credential_files(tmp_path: Path) -> None:
    require_program("bwrap", "the shell sandbox runs commands under bubblewrap")
    home = tmp_path / "home"
    values = {name: secrets.token_hex(16) for name in ("aws", "ssh", "netrc", "vault")}
    files = {
        ".aws/credentials": f"[default]\naws_secret_access_key = {values['aws']}\n",
        ".ssh/id_ed25519": f"-----BEGIN OPENSSH PRIVATE KEY-----\n{values['ssh']}\n",
        ".netrc": f"machine example.com login me password {values['netrc']}\n",
        ".vault-token": f"{values['vault']}\n",
    }
    for name, content in files.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(content)
    root = tmp_path / "ws"
    make_workspace(root)
    config_home = Path(os.environ["XDG_CONFIG_HOME"])
    user_config(config_home, "workspace-write", 'sandbox_hide = ["~/.vault-token"]\n')
    client = await raw_mcp(root, {}, "hidden-credentials-test", {"HOME": str(home)})
    try:
        answers: dict[str, dict[str, Any]] = {}
        for probe in (
            "cat ~/.aws/credentials",
            "base64 ~/.ssh/id_ed25519",
            f'python3 -c "{HEX}"',
            "cat ~/.vault-token | xxd -p",
            "cat .env",
        ):
            answers[probe] = await call(client, "bash", {"command": probe})
        outside = await call(client, "bash", {"command": "cat ~/.netrc", "sandbox": "off"})
    finally:
        await client.close()
    printed = {p: json.dumps(a, ensure_ascii=False) for p, a in answers.items()}
    leaks = [
        (probe, name)
        for probe, answer in printed.items()
        for name, value in values.items()
        if any(form in answer for form in forms(value))
    ]
    assert not leaks, leaks
    # The workspace's own .env is read, and its value shown as a placeholder.
    assert "‹secret:.env:DB_PASSWORD›" in text(answers["cat .env"])
    assert DB_PASSWORD not in printed["cat .env"]
    # Outside the sandbox (mode bypass: unasked here; by default it asks) the file is read,
    # and the known value is replaced.
    assert "machine example.com" in text(outside), outside
    assert values["netrc"] not in json.dumps(outside)
    assert "‹secret:" in text(outside)
