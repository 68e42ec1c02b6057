#!/usr/bin/env bash
# The MCP Inspector CLI (npm @modelcontextprotocol/inspector, pinned by
# tests/mcp/npm/package-lock.json) that tests/mcp/test_inspector.py drives against
# `toolhost mcp`. Idempotent: installs into .tools/mcp-inspector with the machine's node/npm.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
src="$here/tests/mcp/npm"
dest="$here/.tools/mcp-inspector"

say() { printf '    %s\n' "$*" >&2; }

if ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    say "apt-get install nodejs npm"
    apt-get install -y -qq nodejs npm >/dev/null 2>&1 || {
      apt-get update -qq >/dev/null
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
    }
  else
    say "SKIP MCP Inspector: npm not found (apt-get install nodejs npm)"
    exit 0
  fi
fi
lock_sum=$(sha256sum "$src/package-lock.json" | cut -d' ' -f1)
if [ -f "$dest/.installed" ] && [ "$(cat "$dest/.installed")" = "$lock_sum" ]; then
  say "MCP Inspector already installed"
  exit 0
fi
say "npm install (locked) @modelcontextprotocol/inspector into $dest"
mkdir -p "$dest"
cp "$src/package.json" "$src/package-lock.json" "$dest/"
# `npm ci` refuses this lock (npm 11 leaves vite's unpublished optional
# napi-windows-process-start-time out of it): install exactly the locked versions instead.
(cd "$dest" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
echo "$lock_sum" > "$dest/.installed"
