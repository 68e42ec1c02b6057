#!/usr/bin/env bash
# The VS Code extension's checks outside pytest: ESLint, tsc, unit tests (node's
# test runner), generated files up to date, and the .vsix package the real-VS-Code
# test installs (build/vscode/toolhost.vsix, gitignored).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root/extension/vscode"

step() { printf '    50-vscode: %s\n' "$*" >&2; }

step "eslint"
npx --no-install eslint src scripts
step "tsc --noEmit"
npx --no-install tsc --noEmit -p tsconfig.json
step "unit tests"
rm -rf out
npx --no-install tsc -p tsconfig.test.json
node --test out/test/*.test.js
step "generated languageModelTools and protocol types are up to date"
node scripts/gen-lm-tools.mjs --check
if [ -f scripts/gen-protocol.mjs ]; then
  node scripts/gen-protocol.mjs --check
fi
step "vsce package"
node esbuild.mjs --production
mkdir -p "$root/build/vscode"
npx --no-install vsce package --no-dependencies --no-rewrite-relative-links --out "$root/build/vscode/toolhost.vsix" >/dev/null
step "packaged $root/build/vscode/toolhost.vsix"
