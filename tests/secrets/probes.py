"""The secrets a test server starts with, and the probes that try to print them."""

from __future__ import annotations

import shutil
from pathlib import Path

FAKE_API_KEY = "sk-live-4f9a7c2e81d04b6aa3e1c55d9f0b7e62"
GITHUB_TOKEN = "ghp_Zq8v3KcN1xW0yR5tB7mL2pD9fH4sJ6aE0uIo"
DB_PASSWORD = "pw-Tr0ub4dor-and-3-more"
PEM_LINE = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Vq3x2Jd8Q0kZ"
SECRETS = (FAKE_API_KEY, GITHUB_TOKEN, DB_PASSWORD, PEM_LINE)
SERVER_ENV = {"FAKE_API_KEY": FAKE_API_KEY, "GITHUB_TOKEN": GITHUB_TOKEN}

# Each command tries to print a secret the server knows; all run unasked (mode bypass).
PROBES: list[str] = [
    "env",
    "printenv",
    "printenv FAKE_API_KEY GITHUB_TOKEN; echo rc=$?",
    'echo "$FAKE_API_KEY $GITHUB_TOKEN"',
    "export -p",
    "declare -p",
    "set",
    "env -0 | tr '\\0' '\\n'",
    "sh -c 'echo $GITHUB_TOKEN; env'",
    "python3 -c 'import os;print(os.environ)'",
    "python3 -c 'import os,json;print(json.dumps(dict(os.environ)))'",
    "python3 -c 'import os;print(open(\"/proc/%d/environ\" % os.getppid()).read())'",
    "perl -e 'print map {\"$_=$ENV{$_}\\n\"} keys %ENV'",
    "awk 'BEGIN{for(k in ENVIRON) print k\"=\"ENVIRON[k]}'",
    "cat /proc/self/environ | tr '\\0' '\\n'",
    "cat /proc/$PPID/environ | tr '\\0' '\\n'",
    "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'; true",
    "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -a -e GITHUB -e FAKE; true",
    "for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; done 2>/dev/null; true",
    "strings /proc/*/environ 2>/dev/null; true",
    "ps eww -A 2>/dev/null; true",
    "xargs -0 -n1 echo < /proc/$PPID/environ",
    "cat .env",
    "sed -n p .env; grep -h PASSWORD .env",
    "grep -r sk-live . ; grep -r DB_PASSWORD . ; true",
    "cat config.py",
    "cat keys/server.pem",
    "cp .env copy.txt && cat copy.txt && rm copy.txt",
    "python3 -c 'print(open(\".env\").read())'",
    "head -c 120000 /dev/zero | tr '\\0' a; echo; cat /proc/*/environ 2>/dev/null; cat .env",
]
if shutil.which("node"):
    PROBES.append("node -e 'console.log(process.env)'")
if shutil.which("jq"):  # else that one probe is skipped: no jq on this machine
    PROBES.append("jq -n env")


def make_workspace(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / ".env").write_text(
        f"DB_PASSWORD={DB_PASSWORD}\nNODE_ENV=production\n# a comment\n", encoding="utf-8"
    )
    (root / "config.py").write_text(f"API_KEY = '{FAKE_API_KEY}'\n", encoding="utf-8")
    (root / "keys").mkdir(exist_ok=True)
    (root / "keys" / "server.pem").write_text(
        f"-----BEGIN PRIVATE KEY-----\n{PEM_LINE}\n-----END PRIVATE KEY-----\n",
        encoding="utf-8",
    )
    (root / "notes.md").write_text("nothing secret here\n", encoding="utf-8")


def user_config(config_home: Path, sandbox: str, extra: str = "") -> None:
    """The user's own config file: every call runs unasked, so that only redaction stands
    between a secret and the result."""
    folder = config_home / "toolhost"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(
        f'[policy]\nmode = "bypass"\n\n[shell]\nsandbox = "{sandbox}"\n{extra}',
        encoding="utf-8",
    )


def leaked(text: str) -> list[str]:
    return [secret[:12] + "..." for secret in SECRETS if secret in text]
