#!/usr/bin/env bash
# The VS Code extension's toolchain and the real VS Code it is tested in.
#   - extension/vscode: npm ci (TypeScript, esbuild, ESLint, vsce, vscode-languageclient)
#   - .tools/code-server: code-server 4.100.3 (VS Code 1.100.3) + playwright-core, pinned by
#     tests/vscode/npm/package-lock.json, built with the recipe of the environment notes
#     (code-server's own postinstall downloads ripgrep, which cannot work here)
#   - Debian chromium and the native build tools (apt-get, only when root)
# Idempotent: each part is stamped with the hash of its inputs and skipped when unchanged.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

say() { printf '    50-vscode: %s\n' "$*" >&2; }

if ! command -v npm >/dev/null 2>&1; then
  say "npm is missing: install Debian's nodejs and npm (apt-get install nodejs npm)"
  exit 1
fi

# --- Debian packages: chromium for Playwright; compilers and headers for code-server's
# native modules (argon2, kerberos, node-pty, spdlog); ripgrep replaces the download.
apt_packages=(chromium build-essential pkg-config libkrb5-dev ripgrep)
missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = "0" ]; then
    say "apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    say "not root: cannot install ${missing[*]}; the real-VS-Code test will skip (or fail in CI)"
  fi
fi

stamp_ok() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }

# --- The extension's npm packages.
ext=extension/vscode
ext_want=$(cat "$ext/package-lock.json" | sha256sum | cut -d' ' -f1)
if ! stamp_ok "$ext/node_modules/.toolhost-stamp" "$ext_want"; then
  say "npm ci in $ext"
  (cd "$ext" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$ext_want" > "$ext/node_modules/.toolhost-stamp"
fi

# --- code-server + playwright-core.
cs_root=.tools/code-server
cs_want=$(cat tests/vscode/npm/package.json tests/vscode/npm/package-lock.json | sha256sum | cut -d" " -f1)
if stamp_ok "$cs_root/.toolhost-stamp" "$cs_want"; then
  exit 0
fi
if ! command -v rg >/dev/null 2>&1 || ! command -v make >/dev/null 2>&1; then
  say "ripgrep or build tools missing: cannot build code-server (see above)"
  exit 1
fi
say "installing code-server into $cs_root (about a minute)"
rm -rf "$cs_root"
mkdir -p "$cs_root"
cp tests/vscode/npm/package.json tests/vscode/npm/package-lock.json "$cs_root/"
cd "$cs_root"
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
npm rebuild argon2 --loglevel=error
vs=node_modules/code-server/lib/vscode
(
  cd "$vs"
  if [ -f package-lock.json ]; then
    npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error
  else
    npm install --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error
  fi
  mkdir -p node_modules/@vscode/ripgrep/bin
  cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
  # node-pty's last step runs npx and fails offline, after pty.node is built.
  npm rebuild kerberos node-pty @vscode/spdlog @vscode/deviceid native-watchdog --loglevel=error || true
  test -f node_modules/node-pty/build/Release/pty.node
  ln -sfn node_modules node_modules.asar
  ln -sfn code-linux.sh bin/remote-cli/code-server
  ln -sfn browser-linux.sh bin/helpers/browser.sh
  cd extensions
  if [ -f package-lock.json ]; then
    npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error
  else
    npm install --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error
  fi
)
echo "$cs_want" > .toolhost-stamp
say "code-server ready: $cs_root/node_modules/.bin/code-server"
