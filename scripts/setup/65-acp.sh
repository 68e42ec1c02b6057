#!/usr/bin/env bash
# The official ACP SDK (npm @agentclientprotocol/sdk) and the ACP agents claude-code-acp and
# codex-acp (npm @zed-industries/*), pinned by tests/acp/npm/package-lock.json:
# tests/acp/ drive `toolhost acp` with the SDK's client() app (the editor side), write their
# scripted test agent with its agent() app, and run the real ACP agents. Idempotent: installs into
# .tools/acp-sdk with the machine's node/npm.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../lib/npm_locked.sh
. "$here/scripts/lib/npm_locked.sh"
install_npm_locked "$here/tests/acp/npm" "$here/.tools/acp-sdk" "the ACP SDK and agents" ci
