#!/usr/bin/env bash
# The wheels `./run dist` and the install tests (tests/dist) need, downloaded once into
# .tools/dist-wheelhouse: toolhost's runtime dependencies, the build backend, and the
# per-Python wheels the VS Code package bundles (scripts/dist/wheelhouse.py says which).
# The build and the tests then install with --no-index: no network after this step.
# Also uv (PyPI `uv`, pinned) in .tools/dist-uv, for the `uv tool install` / `uvx` tests, and
# pipx (PyPI `pipx`, pinned) in .tools/dist-pipx, for the `pipx install` test.
# Idempotent: skipped while pyproject.toml, wheelhouse.py and the uv pin are unchanged.
# No root needed.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
py=${VENV:-$root/.venv}/bin/python
wheelhouse="$root/.tools/dist-wheelhouse"
uv_pin="uv==0.13.8"
pipx_pin="pipx==1.18.4"

say() { printf '    70-dist-wheelhouse: %s\n' "$*" >&2; }

want=$(cat "$root/pyproject.toml" "$root/scripts/dist/wheelhouse.py" | sha256sum | cut -d' ' -f1)
stamp="$wheelhouse/.toolhost-stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  say "wheelhouse up to date ($(ls "$wheelhouse" | grep -c '\.whl$') wheels)"
else
  mkdir -p "$wheelhouse"
  say "downloading into $wheelhouse"
  "$py" "$root/scripts/dist/wheelhouse.py" "$wheelhouse"
  echo "$want" > "$stamp"
fi

uv_dir="$root/.tools/dist-uv"
if [ -x "$uv_dir/bin/uv" ] && [ "$(cat "$uv_dir/.toolhost-stamp" 2>/dev/null)" = "$uv_pin" ]; then
  say "$uv_pin already installed"
else
  say "installing $uv_pin into $uv_dir"
  rm -rf "$uv_dir"
  python3 -m venv "$uv_dir"
  "$uv_dir/bin/python" -m pip install --quiet --disable-pip-version-check "$uv_pin"
  echo "$uv_pin" > "$uv_dir/.toolhost-stamp"
fi

pipx_dir="$root/.tools/dist-pipx"
if [ -x "$pipx_dir/bin/pipx" ] && [ "$(cat "$pipx_dir/.toolhost-stamp" 2>/dev/null)" = "$pipx_pin" ]; then
  say "$pipx_pin already installed"
else
  say "installing $pipx_pin into $pipx_dir"
  rm -rf "$pipx_dir"
  python3 -m venv "$pipx_dir"
  "$pipx_dir/bin/python" -m pip install --quiet --disable-pip-version-check "$pipx_pin"
  echo "$pipx_pin" > "$pipx_dir/.toolhost-stamp"
fi
