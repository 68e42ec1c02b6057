#!/usr/bin/env bash
# `./run dist [--target T] [--out DIR]`: the artefacts a release publishes, one version
# (pyproject.toml's) everywhere:
#   DIR/toolhost_runtime-V-py3-none-any.whl, DIR/toolhost_runtime-V.tar.gz
#                             the distribution toolhost-runtime (python -m build: sdist, then
#                             the wheel built from the sdist); the command is `toolhost`
#   DIR/toolhost-T-V.vsix     the VS Code extension with its server in bundled/libs
#   DIR/toolhost.nvim/        the Neovim plugin (extension/nvim) as a git repository of its
#                             own, tagged vV: what vim.pack and lazy.nvim clone
# T is a VS Code target (linux-x64 by default; linux-arm64, darwin-arm64, darwin-x64,
# win32-x64 install the dependencies from the package index for that platform).
# Builds offline from .tools/dist-wheelhouse (scripts/setup/70-dist-wheelhouse.sh fills it).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
py=${VENV:-$root/.venv}/bin/python
target=linux-x64
out="$root/dist"
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: ./run dist [--target T] [--out DIR]" >&2; exit 2 ;;
  esac
done
say() { printf '    dist: %s\n' "$*" >&2; }

wheelhouse="$root/.tools/dist-wheelhouse"
VENV=${VENV:-$root/.venv} bash "$root/scripts/setup/70-dist-wheelhouse.sh"
rm -rf "$out"
mkdir -p "$out"
say "sdist and wheel"
# The build backend comes from the wheelhouse too (build isolation, no index).
PIP_NO_INDEX=1 PIP_FIND_LINKS="$wheelhouse" "$py" -m build --outdir "$out" "$root" >/dev/null
# A source tree builds into build/ and *.egg-info: leave the checkout as it was.
rm -rf "$root/build/lib" "$root/build/bdist."* "$root"/*.egg-info
wheel=$(ls "$out"/toolhost_runtime-*-py3-none-any.whl)
find_links=()
[ "$target" = linux-x64 ] && find_links=(--find-links "$wheelhouse")
if [ ! -x "$root/extension/vscode/node_modules/.bin/vsce" ]; then
  say "npm ci in extension/vscode"
  (cd "$root/extension/vscode" && npm ci --no-audit --no-fund --loglevel=error)
fi
say "VS Code manifest: what the Marketplace and Open VSX accept"
"$py" "$root/scripts/dist/check_manifest.py" "$root/extension/vscode/package.json" >&2
say "VS Code package for $target"
"$py" "$root/scripts/dist/bundle_vscode.py" --wheel "$wheel" --target "$target" --out "$out" "${find_links[@]}" >/dev/null
say "Neovim plugin repository"
version=$("$py" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["project"]["version"])' "$root/pyproject.toml")
plugin="$out/toolhost.nvim"
mkdir -p "$plugin"
cp -R "$root/extension/nvim/." "$plugin/"
cp "$root/LICENSE" "$plugin/LICENSE"
git -C "$plugin" init -q -b main
git -C "$plugin" add -A
git -C "$plugin" -c user.name="toolhost dist" -c user.email=dist@toolhost.invalid \
  commit -q -m "toolhost.nvim $version (extension/nvim of toolhost)"
git -C "$plugin" tag "v$version"
ls -1 "$out" >&2
