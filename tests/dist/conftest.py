"""The artefacts of `./run dist`, built once per test session, and toolhost installed from
its wheel into a fresh venv far from the checkout, the way a user installs it.

Both install offline from .tools/dist-wheelhouse (scripts/setup/70-dist-wheelhouse.sh):
tests reach loopback only. `user_env` is the environment of a user with that venv: a
temporary HOME, a PATH and PYTHONPATH without the checkout or its .venv, and the audit hook
of audit_hook.py, whose log `assert_checkout_untouched` reads.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import missing_part, require_program

REPO = Path(__file__).resolve().parents[2]
WHEELHOUSE = REPO / ".tools" / "dist-wheelhouse"
BUILD = REPO / "scripts" / "dist" / "build.sh"
# Folders a user's PATH has; the checkout and its .venv are not among them.
SYSTEM_PATH = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]


def version() -> str:
    import tomllib

    return str(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"])


def require_wheelhouse() -> Path:
    if not (WHEELHOUSE / ".toolhost-stamp").is_file():
        missing_part(
            "the offline wheelhouse .tools/dist-wheelhouse is missing "
            "(scripts/setup/70-dist-wheelhouse.sh fills it)"
        )
    return WHEELHOUSE


def system_python() -> str:
    """A Python of the machine, not the checkout's venv (its base interpreter)."""
    base = Path(getattr(sys, "_base_executable", sys.executable))
    if str(base).startswith(str(REPO)):
        return require_program("python3", "the install tests make a fresh venv")
    return str(base)


@pytest.fixture(scope="session")
def dist_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`./run dist --out DIR` (the script `./run dist` runs), once per session."""
    require_wheelhouse()
    require_program("node", "builds the VS Code extension")
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        ["bash", str(BUILD), "--out", str(out)],
        env={**_clean_environ(), "VENV": str(Path(sys.executable).parent.parent)},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    return out


def _clean_environ() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}


@pytest.fixture(scope="session")
def user_wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The offline wheelhouse copied out of the checkout: where a user's pip finds the
    dependencies (a package index of their own), so installing reads nothing of the checkout
    either and the audit log stays about what the installed toolhost touches."""
    copy = tmp_path_factory.mktemp("index") / "wheels"
    shutil.copytree(require_wheelhouse(), copy)
    return copy


@pytest.fixture(scope="session")
def user_venv(
    tmp_path_factory: pytest.TempPathFactory, dist_dir: Path, user_wheelhouse: Path
) -> Path:
    """A fresh venv with only the built wheel (and its dependencies) installed."""
    venv = tmp_path_factory.mktemp("user") / "venv"
    subprocess.run([system_python(), "-m", "venv", str(venv)], check=True, timeout=120)
    wheel = next(dist_dir.glob("toolhost_runtime-*-py3-none-any.whl"))
    subprocess.run(
        [
            str(venv / "bin" / "python"),
            *("-m", "pip", "install", "--quiet", "--disable-pip-version-check"),
            *("--no-index", "--find-links", str(user_wheelhouse), str(wheel)),
        ],
        check=True,
        capture_output=True,
        timeout=600,
        env=_clean_environ(),
    )
    purelib = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import sysconfig; print(sysconfig.get_path('purelib'))",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    shutil.copy(Path(__file__).with_name("audit_hook.py"), Path(purelib) / "sitecustomize.py")
    return venv


def user_environment(folder: Path, path: list[str]) -> dict[str, str]:
    """The environment of a user whose HOME is folder/home and whose PATH is `path` and the
    system's folders: nothing of the checkout in it; the audit hook logs to folder."""
    home = folder / "home"
    home.mkdir()
    runtime = folder / "run"
    runtime.mkdir(mode=0o700)
    env = {
        "HOME": str(home),
        "PATH": ":".join([*path, *SYSTEM_PATH]),
        "LANG": "C.UTF-8",
        "XDG_RUNTIME_DIR": str(runtime),
        "TMPDIR": str(folder),
        "TOOLHOST_TEST_FORBIDDEN": str(REPO),
        "TOOLHOST_TEST_AUDIT_LOG": str(folder / "checkout-access.jsonl"),
    }
    assert str(REPO) not in env["PATH"]
    return env


@pytest.fixture
def user_env(tmp_path: Path, user_venv: Path) -> Iterator[dict[str, str]]:
    """A user who installed the wheel into user_venv (its bin first on PATH)."""
    env = user_environment(tmp_path, [str(user_venv / "bin")])
    yield env
    assert_checkout_untouched(env)


def assert_checkout_untouched(env: dict[str, str]) -> None:
    log = Path(env["TOOLHOST_TEST_AUDIT_LOG"])
    touched = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    assert touched == [], f"the installed toolhost reached into the checkout: {touched[:10]}"


@pytest.fixture
def far_folder(tmp_path: Path) -> Path:
    """A project folder outside the checkout, with a little Python in it."""
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "shapes.py").write_text(
        "class Circle:\n    def area(self):\n        return 3.14\n\n\ndef make_circle():\n"
        "    return Circle()\n"
    )
    (root / "README.md").write_text("# far away\nhello from outside the checkout\n")
    return root


def install_blocks(language: str) -> list[str]:
    """The code blocks of `language` in the README's Install section, as a reader copies
    them (a block indented under a list item dedented)."""
    section = (REPO / "README.md").read_text().split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    parts = section.split(f"```{language}\n")[1:]
    return [textwrap.dedent(part.split("```", 1)[0]) for part in parts]


def sh(block: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        env=env, cwd=cwd, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def typed(block: str) -> str:
    """A bash script that runs `block` line by line in one shell, each line shown first as
    `$ line`, the way it reads in a terminal; it stops at the first failing line."""
    lines = [line for line in block.splitlines() if line.strip()]
    return "\n".join(f"printf '$ %s\\n' {shlex.quote(line)}\n{line}" for line in lines)


def transcript(block: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`block` typed into a fresh bash: stdout holds the screen (output and errors)."""
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", typed(block)],
        env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        timeout=600, check=False,
    )  # fmt: skip


@dataclass
class ReadmeUser:
    """A user who ran the README's Install block: `env` is their next shell's (the block's
    PATH line in their profile, as the README says), `screen` what the block printed."""

    env: dict[str, str]
    home: Path
    screen: str


@pytest.fixture(scope="session")
def readme_user(
    tmp_path_factory: pytest.TempPathFactory, dist_dir: Path, user_wheelhouse: Path
) -> ReadmeUser:
    """The README's Install block, run verbatim in a clean HOME from a folder that holds the
    built `dist/`, by a user whose PATH lacks ~/.local/bin (the block's own line adds it)."""
    folder = tmp_path_factory.mktemp("readme-user")
    env = user_environment(folder, [])
    home = Path(env["HOME"])
    hook = folder / "audit"
    hook.mkdir()
    shutil.copy(Path(__file__).with_name("audit_hook.py"), hook / "sitecustomize.py")
    env.update(
        {
            # The audit hook rides along (a temp folder, not the checkout); pip reads the
            # offline wheelhouse as its index.
            "PYTHONPATH": str(hook),
            "PIP_NO_INDEX": "1",
            "PIP_FIND_LINKS": str(user_wheelhouse),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        }
    )
    (folder / "dist").symlink_to(dist_dir)
    block = install_blocks("sh")[0]
    done = transcript(block, env, folder)
    screen = done.stdout
    saved = REPO / "test-artifacts" / "readme-install" / "install-block.txt"
    saved.parent.mkdir(parents=True, exist_ok=True)
    saved.write_text(screen.replace(str(home), "~"), encoding="utf-8")
    print(f"\n--- the README's Install block, as a user sees it ---\n{screen}")
    assert done.returncode == 0, screen
    path_line = next(line for line in block.splitlines() if line.startswith("export PATH="))
    (home / ".profile").write_text(path_line + "\n", encoding="utf-8")
    env["PATH"] = f"{home}/.local/bin:{env['PATH']}"
    return ReadmeUser(env, home, screen)
