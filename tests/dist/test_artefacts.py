"""`./run dist`: the wheel, the sdist and the VS Code package, with one version everywhere,
and the wheel carries every file the package reads at run time."""

from __future__ import annotations

import json
import re
import stat
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.dist.conftest import REPO, version

# The first test of a session builds ./run dist (4-5 minutes on a busy 2-core machine).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def packaged_files() -> list[str]:
    """Every non-Python file of the lsp_server package in git (queries, py.typed ...)."""
    listed = subprocess.run(
        ["git", "ls-files", "lsp_server"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    return sorted(name for name in listed if not name.endswith(".py"))


def test_dist_holds_the_artefacts_of_one_version(dist_dir: Path, user_venv: Path) -> None:
    v = version()
    assert sorted(p.name for p in dist_dir.iterdir()) == sorted(
        [
            f"toolhost_runtime-{v}-py3-none-any.whl",
            f"toolhost_runtime-{v}.tar.gz",
            f"toolhost-linux-x64-{v}.vsix",
            "toolhost.nvim",
        ]
    )
    with zipfile.ZipFile(dist_dir / f"toolhost_runtime-{v}-py3-none-any.whl") as wheel:
        metadata = wheel.read(f"toolhost_runtime-{v}.dist-info/METADATA").decode()
    assert f"\nVersion: {v}\n" in metadata
    with tarfile.open(dist_dir / f"toolhost_runtime-{v}.tar.gz") as sdist:
        member = sdist.extractfile(f"toolhost_runtime-{v}/PKG-INFO")
        assert member is not None
        assert f"\nVersion: {v}\n" in member.read().decode()
    with zipfile.ZipFile(dist_dir / f"toolhost-linux-x64-{v}.vsix") as vsix:
        package = json.loads(vsix.read("extension/package.json"))
        manifest = vsix.read("extension.vsixmanifest").decode()
        bundle = json.loads(vsix.read("extension/bundled/bundle.json"))
    assert package["version"] == v
    identity = re.search(r"<Identity [^>]*>", manifest)
    assert identity is not None
    assert f'Version="{v}"' in identity[0] and 'TargetPlatform="linux-x64"' in identity[0]
    assert bundle["wheel"] == f"toolhost_runtime-{v}-py3-none-any.whl"
    # The installed command says the same version.
    said = subprocess.run(
        [str(user_venv / "bin" / "toolhost"), "--version"], capture_output=True, text=True
    )
    assert said.stdout.strip() == f"toolhost {v}"
    # The extension's source says it too (what `vsce package` of a dev build uses).
    assert json.loads((REPO / "extension/vscode/package.json").read_text())["version"] == v
    # The Neovim plugin's own repository is tagged with the version.
    tags = subprocess.run(
        ["git", "-C", str(dist_dir / "toolhost.nvim"), "tag"], capture_output=True, text=True
    )
    assert tags.stdout.split() == [f"v{v}"]
    changelog = (REPO / "CHANGELOG.md").read_text()
    assert f"## {v}" in changelog


def test_the_wheel_carries_every_file_the_package_reads(dist_dir: Path) -> None:
    wheel_path = next(dist_dir.glob("toolhost_runtime-*.whl"))
    with zipfile.ZipFile(wheel_path) as wheel:
        names = set(wheel.namelist())
    data = packaged_files()
    assert any(name.endswith(".scm") for name in data), data  # the tree-sitter queries
    missing = [name for name in data if name not in names]
    assert missing == [], f"not in the wheel: {missing}"
    # ... and every Python module of the package is there too.
    modules = subprocess.run(
        ["git", "ls-files", "lsp_server/*.py", "lsp_server/**/*.py"],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert [m for m in modules if m not in names] == []
    # The wheel needs nothing from the checkout: no path outside the package.
    outside = [n for n in names if not n.startswith(("lsp_server/", "toolhost_runtime-"))]
    assert outside == []


def test_the_vsix_carries_the_server_and_ripgrep(dist_dir: Path) -> None:
    vsix_path = next(dist_dir.glob("toolhost-linux-x64-*.vsix"))
    with zipfile.ZipFile(vsix_path) as vsix:
        infos = {info.filename: info for info in vsix.infolist()}
    libs = "extension/bundled/libs/"
    assert "extension/bundled/tool/toolhost_serve.py" in infos
    assert "extension/dist/extension.js" in infos
    for name in packaged_files():
        assert libs + name in infos, name
    rg = infos[libs + "bin/rg"]
    assert (rg.external_attr >> 16) & stat.S_IXUSR, "rg lost its executable bit"
    # Each other Python has its own build of the one-version dependencies.
    for tag in ("cp312", "cp313", "cp314"):
        assert any(n.startswith(f"extension/bundled/abi/{tag}/pydantic_core/") for n in infos)
    # No console script or checkout file slipped in.
    assert not any(n.startswith(f"{libs}bin/") and n != f"{libs}bin/rg" for n in infos)
    assert not any("/.venv/" in n or "node_modules" in n for n in infos)


def test_the_vsix_page_shows_what_the_extension_does(dist_dir: Path) -> None:
    """The package's README (its page in VS Code) describes the current extension, and the
    screenshots it shows travel in the package."""
    vsix_path = next(dist_dir.glob("toolhost-linux-x64-*.vsix"))
    with zipfile.ZipFile(vsix_path) as vsix:
        names = set(vsix.namelist())
        # vsce stores the README as readme.md
        page = next(n for n in names if n.lower() == "extension/readme.md")
        readme = vsix.read(page).decode()
    for topic in ("diff editor", "language-model tools", "Revert a Call", "bundled"):
        assert topic.lower() in readme.lower(), topic
    assert "Show diff" not in readme  # the old modal's button is gone
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme)
    assert len(images) >= 2, images
    for image in images:
        assert f"extension/{image}" in names, image
        assert (REPO / "extension" / "vscode" / image).stat().st_size < 80_000
