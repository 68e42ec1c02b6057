"""The README's Neovim and Emacs recipes, run as written (paths filled in) in the real
editors with a temporary HOME: the plugin installs through the editor's own package
manager, says when `toolhost` is missing and how to install it, and then runs the
`toolhost` a user installed from the wheel (tests/dist/conftest.py: user_venv)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import missing_part
from tests.dist.conftest import REPO, SYSTEM_PATH, assert_checkout_untouched
from tests.emacs.conftest import find_emacs
from tests.nvim.conftest import find_nvim

pytestmark = [pytest.mark.real_client, pytest.mark.slow, pytest.mark.timeout(600)]


def readme_block(heading: str, language: str) -> str:
    """The first ```language block after the README paragraph that starts with heading."""
    readme = (REPO / "README.md").read_text()
    after = readme.split("## Install", 1)[1].split(heading, 1)[1]
    return after.split(f"```{language}\n", 1)[1].split("```", 1)[0]


def run_editor(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=240, check=False
    )


def project(far_folder: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(far_folder)], check=True)
    return far_folder


NVIM_CHECK = """
if vim.fn.executable("toolhost") == 1 then
  vim.wait(30000, function()
    local client = require("toolhost").client()
    return client ~= nil and client.initialized
  end, 100)
end
vim.cmd("checkhealth toolhost")
vim.cmd("write! " .. vim.env.TOOLHOST_TEST_OUT)
vim.cmd("qall!")
"""


def test_the_neovim_recipe_installs_with_vim_pack(
    dist_dir: Path, user_env: dict[str, str], far_folder: Path
) -> None:
    nvim = find_nvim()
    if nvim is None:
        missing_part("Neovim 0.12 (vim.pack) not found (scripts/setup/40-neovim.sh)")
    recipe = readme_block("**Neovim**", "lua").replace(
        "file:///path/to/toolhost/dist/toolhost.nvim", (dist_dir / "toolhost.nvim").as_uri()
    )
    assert "vim.pack.add" in recipe and str(dist_dir) in recipe
    home = Path(user_env["HOME"])
    config = home / ".config" / "nvim"
    config.mkdir(parents=True)
    (config / "init.lua").write_text(recipe + NVIM_CHECK)
    root = project(far_folder)
    out = root.parent / "health.txt"
    env = {**user_env, "TOOLHOST_TEST_OUT": str(out)}

    # 1. No toolhost on PATH: the health check says so and how to install it.
    without = {**env, "PATH": ":".join(SYSTEM_PATH)}
    done = run_editor([nvim, "--headless", "pkg/shapes.py"], without, root)
    health = out.read_text()
    assert "toolhost was not found" in health, (health, done.stderr[-2000:])
    assert "pipx install toolhost_runtime-VERSION-py3-none-any.whl" in health, health
    installed = list((home / ".local/share/nvim/site/pack/core/opt").iterdir())
    assert [p.name for p in installed] == ["toolhost.nvim"]

    # 2. With the wheel's toolhost on PATH: found, started, and answering.
    out.unlink()
    done = run_editor([nvim, "--headless", "pkg/shapes.py"], env, root)
    health = out.read_text()
    assert "OK server command:" in health and "from PATH" in health, (health, done.stderr)
    assert "toolhost/status answered" in health, health
    assert "ERROR" not in health, health
    assert_checkout_untouched(user_env)


EMACS_CHECK = """
(let ((result (condition-case err
                  (progn (find-file "pkg/shapes.py")
                         (toolhost)
                         (toolhost-call-sync "read_file" '(:path "README.md")))
                (error (list :failed (error-message-string err))))))
  (with-temp-file (getenv "TOOLHOST_TEST_OUT") (insert (json-encode result))))
"""


def emacs_argv(emacs: str, *forms: str) -> list[str]:
    # Debian's emacs-nox finds its elpa-eglot through site-start, which --batch -Q skips.
    debian = '(add-to-list (quote package-directory-list) "/usr/share/emacs/site-lisp/elpa")'
    argv = [emacs, "--batch", "-Q", "--eval", "(require 'package)", "--eval", debian]
    for form in forms:
        argv += ["--eval", form]
    return argv


def test_the_emacs_recipe_installs_with_package_install_file(
    user_env: dict[str, str], far_folder: Path
) -> None:
    emacs = find_emacs()
    if emacs is None:
        missing_part("Emacs with eglot not found (scripts/setup/60-emacs-tmux.sh)")
    recipe = readme_block("**Emacs**", "elisp").replace("/path/to/toolhost", str(REPO))
    assert "package-install-file" in recipe
    root = project(far_folder)
    home = Path(user_env["HOME"])
    env = {**user_env, "TOOLHOST_TEST_OUT": str(root.parent / "emacs.json")}
    # The recipe installs a copy into ~/.emacs.d/elpa (then nothing reads the checkout).
    installed = run_editor(emacs_argv(emacs, "(package-initialize)", recipe), env, root)
    assert installed.returncode == 0, installed.stderr[-3000:]
    package = next((home / ".emacs.d" / "elpa").glob("toolhost-*"))
    assert (package / "toolhost.el").is_file() and (package / "toolhost-autoloads.el").is_file()
    version = json.loads((REPO / "extension/vscode/package.json").read_text())["version"]
    assert package.name == f"toolhost-{version}"

    def session(path: str) -> object:
        argv = emacs_argv(emacs, "(package-initialize)", EMACS_CHECK)
        run = run_editor(argv, {**env, "PATH": path}, root)
        assert run.returncode == 0, run.stderr[-3000:]
        return json.loads(Path(env["TOOLHOST_TEST_OUT"]).read_text())

    # No toolhost: the error names the fix.
    missing = session(":".join(SYSTEM_PATH))
    assert isinstance(missing, dict) and "failed" in missing, missing
    assert "pipx install toolhost_runtime-VERSION-py3-none-any.whl" in json.dumps(missing)
    # The wheel's toolhost on PATH: the package starts it and a call round-trips.
    result = session(user_env["PATH"])
    assert "far away" in json.dumps(result), result
    assert_checkout_untouched(user_env)
