"""One name for what a user installs: the distribution toolhost-runtime (`toolhost` on PyPI is
an unrelated project), its wheel and sdist named after it, no old install line left in any
tracked file, and a VS Code manifest the Marketplace and Open VSX accept (docs/DIST.md)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECK = REPO / "scripts" / "dist" / "check_manifest.py"
# What installed the unrelated project, or named a wheel file that no longer exists.
OLD_LINES = re.compile(
    r"pip install (--\S+ )*toolhost(?![\w.-])"  # `pip install toolhost`: someone else's
    r"|pipx install toolhost(?![\w.-])"
    r"|uv tool install toolhost(?![\w.-])"
    r"|toolhost-(\d+\.\d+\.\d+|VERSION|V|\*)(-py3-none-any\.whl|\.tar\.gz|\.dist-info)"
    r"|toolhost-\*(-py3-none-any)?\.whl"
    # An agent line with the bare command: the agent starts it later from its own PATH.
    r"|mcp add toolhost (-- )?toolhost mcp"
)
# This file names the old lines to find them.
ALLOWED = {"tests/dist/test_names.py"}


def test_the_distribution_has_a_name_of_its_own() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["name"] == "toolhost-runtime"
    assert project["scripts"] == {"toolhost": "lsp_server.cli:main"}


def test_no_old_install_line_anywhere() -> None:
    """`pip install toolhost`, `toolhost-0.1.0-py3-none-any.whl` and the like: in no doc,
    message, script or test of the repository."""
    files = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, check=True
    ).stdout.split(b"\0")
    found = []
    for name in (f.decode() for f in files if f):
        path = REPO / name
        if name in ALLOWED or not path.is_file() or path.suffix in {".png", ".jpg", ".vsix"}:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            # A test that asserts a message does NOT say it keeps the line out; it stays.
            if "doesNotMatch" in line or "is None" in line:
                continue
            found += [f"{name}:{number}: {m[0]}" for m in OLD_LINES.finditer(line)]
    assert found == [], "old install lines:\n" + "\n".join(found)


def test_the_pattern_catches_the_old_lines() -> None:
    for old in (
        "pip install toolhost",
        "pip install --user toolhost\n",
        "pipx install toolhost",
        "pip install dist/toolhost-0.1.0-py3-none-any.whl",
        "pipx install toolhost-VERSION-py3-none-any.whl",
        'glob("toolhost-*.whl")',
        "claude mcp add toolhost -- toolhost mcp",
        "gemini mcp add toolhost toolhost mcp",
    ):
        assert OLD_LINES.search(old), old
    for new in (
        "pip install dist/toolhost_runtime-0.1.0-py3-none-any.whl",
        "pipx install toolhost-runtime",
        'claude mcp add toolhost -- "$(command -v toolhost)" mcp',
        "code --install-extension dist/toolhost-linux-x64-0.1.0.vsix",
    ):
        assert not OLD_LINES.search(new), new


def run_check(package: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECK), str(package), "--version", "0.1.0"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_the_vscode_manifest_is_ready_for_the_registries() -> None:
    done = subprocess.run([sys.executable, str(CHECK)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((REPO / "extension" / "vscode" / "package.json").read_text())
    assert done.stdout.strip() == (
        f"manifest ok: {manifest['publisher']}.{manifest['name']} {manifest['version']}"
    )


def test_the_manifest_check_refuses_what_the_registries_refuse(tmp_path: Path) -> None:
    good = json.loads((REPO / "extension" / "vscode" / "package.json").read_text())
    good["version"] = "0.1.0"
    (tmp_path / "LICENSE").write_text("MIT\n")
    (tmp_path / "icon.png").write_bytes(
        b"\x89PNG\r\n\x1a\n" + bytes(8) + (64).to_bytes(4, "big") * 2
    )
    bad = {
        **good,
        "publisher": "Tool Host",
        "version": "0.1.0-dev",
        "categories": ["Agents"],
        "repository": {"type": "git", "url": "git@host:toolhost.git"},
        "icon": "icon.png",
    }
    del bad["displayName"]
    package = tmp_path / "package.json"
    package.write_text(json.dumps(bad))
    done = run_check(package)
    assert done.returncode == 1
    for said in (
        "publisher 'Tool Host'",
        "displayName is missing",
        "version '0.1.0-dev'",
        "category 'Agents'",
        "repository 'git@host:toolhost.git'",
        "icon icon.png is 64x64",
    ):
        assert said in done.stderr, done.stderr
    (tmp_path / "LICENSE").unlink()
    package.write_text(json.dumps(good))
    assert "a LICENSE file" in run_check(package).stderr
