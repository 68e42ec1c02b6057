#!/usr/bin/env bash
# The MCP Inspector CLI (npm @modelcontextprotocol/inspector, pinned by
# tests/mcp/npm/package-lock.json) that tests/mcp/test_inspector.py drives against
# `toolhost mcp`. Idempotent: installs into .tools/mcp-inspector with the machine's node/npm.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../lib/npm_locked.sh
. "$here/scripts/lib/npm_locked.sh"
# `npm ci` refuses this lock (npm 11 leaves vite's unpublished optional
# napi-windows-process-start-time out of it): install exactly the locked versions instead.
install_npm_locked "$here/tests/mcp/npm" "$here/.tools/mcp-inspector" "MCP Inspector" install
