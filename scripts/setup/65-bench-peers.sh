#!/usr/bin/env bash
# The peers bench/peers.py measures toolhost against: the official filesystem MCP server
# (npm @modelcontextprotocol/server-filesystem, pinned by bench/npm/package-lock.json).
# Idempotent: installs into .tools/bench-peers with the machine's node/npm.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
src="$here/bench/npm"
dest="$here/.tools/bench-peers"

say() { printf '    %s\n' "$*" >&2; }

if ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    say "apt-get install nodejs npm"
    apt-get install -y -qq nodejs npm >/dev/null 2>&1 || {
      apt-get update -qq >/dev/null
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
    }
  else
    say "SKIP bench peers: npm not found (apt-get install nodejs npm)"
    exit 0
  fi
fi
lock_sum=$(sha256sum "$src/package-lock.json" | cut -d' ' -f1)
if [ -f "$dest/.installed" ] && [ "$(cat "$dest/.installed")" = "$lock_sum" ]; then
  say "bench peers already installed"
  exit 0
fi
say "npm ci (locked) @modelcontextprotocol/server-filesystem into $dest"
mkdir -p "$dest"
cp "$src/package.json" "$src/package-lock.json" "$dest/"
(cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
echo "$lock_sum" > "$dest/.installed"
