#!/usr/bin/env bash
# The official ACP SDK (npm @agentclientprotocol/sdk) and the ACP agents claude-code-acp and
# codex-acp (npm @zed-industries/*), pinned by tests/acp/npm/package-lock.json:
# tests/acp/ drive `toolhost acp` with the SDK's client() app (the editor side), write their
# scripted test agent with its agent() app, and run the real ACP agents. Idempotent: installs into
# .tools/acp-sdk with the machine's node/npm.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
src="$here/tests/acp/npm"
dest="$here/.tools/acp-sdk"

say() { printf '    %s\n' "$*" >&2; }

if ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    say "apt-get install nodejs npm"
    apt-get install -y -qq nodejs npm >/dev/null 2>&1 || {
      apt-get update -qq >/dev/null
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
    }
  else
    say "SKIP ACP SDK: npm not found (apt-get install nodejs npm)"
    exit 0
  fi
fi
lock_sum=$(sha256sum "$src/package-lock.json" | cut -d' ' -f1)
if [ -f "$dest/.installed" ] && [ "$(cat "$dest/.installed")" = "$lock_sum" ]; then
  say "ACP SDK already installed"
  exit 0
fi
say "npm ci (locked) @agentclientprotocol/sdk into $dest"
mkdir -p "$dest"
cp "$src/package.json" "$src/package-lock.json" "$dest/"
(cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
echo "$lock_sum" > "$dest/.installed"
