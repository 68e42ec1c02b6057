#!/usr/bin/env bash
# The peers bench/peers.py measures toolhost against: the official filesystem MCP server
# (npm @modelcontextprotocol/server-filesystem, pinned by bench/npm/package-lock.json).
# Idempotent: installs into .tools/bench-peers with the machine's node/npm.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../lib/npm_locked.sh
. "$here/scripts/lib/npm_locked.sh"
install_npm_locked "$here/bench/npm" "$here/.tools/bench-peers" "bench peers (server-filesystem)" ci
