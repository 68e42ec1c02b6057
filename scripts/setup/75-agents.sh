#!/usr/bin/env bash
# The real agent CLIs tests/agents drives against `toolhost mcp`: Claude Code, Codex and
# Gemini CLI from npm, pinned by tests/agents/npm/package-lock.json. Idempotent: installs
# into .tools/agents with the machine's node/npm (Node 20 runs all three), and checks that
# the kernel lets the tests give each agent a network namespace of its own (`unshare -n`).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
src="$here/tests/agents/npm"
dest="$here/.tools/agents"

say() { printf '    %s\n' "$*" >&2; }

if ! command -v npm >/dev/null 2>&1 || ! command -v unshare >/dev/null 2>&1 \
  || ! command -v ip >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    say "apt-get install nodejs npm util-linux iproute2"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm util-linux iproute2 \
      >/dev/null 2>&1 || {
      apt-get update -qq >/dev/null
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm util-linux iproute2 >/dev/null
    }
  else
    say "SKIP agent CLIs: npm, unshare or ip not found (apt-get install nodejs npm util-linux iproute2)"
    exit 0
  fi
fi
lock_sum=$(sha256sum "$src/package-lock.json" | cut -d' ' -f1)
if [ -f "$dest/.installed" ] && [ "$(cat "$dest/.installed")" = "$lock_sum" ]; then
  say "agent CLIs already installed"
  exit 0
fi
say "npm ci (locked) Claude Code, Codex, Gemini CLI into $dest"
rm -rf "$dest"
mkdir -p "$dest"
cp "$src/package.json" "$src/package-lock.json" "$dest/"
# --ignore-scripts: no install script may reach past the registry; each CLI's platform
# binary is an optional dependency the lock file pins. Claude Code's own postinstall only
# links that binary into place (no download): run it alone.
(cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error \
  && node node_modules/@anthropic-ai/claude-code/install.cjs)
echo "$lock_sum" > "$dest/.installed"
