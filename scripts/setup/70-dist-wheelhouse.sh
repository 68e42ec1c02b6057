#!/usr/bin/env bash
# The wheels `./run dist` and the install tests (tests/dist) need, downloaded once into
# .tools/dist-wheelhouse: toolhost's runtime dependencies, the build backend, and the
# per-Python wheels the VS Code package bundles (scripts/dist/wheelhouse.py says which).
# The build and the tests then install with --no-index: no network after this step.
# Idempotent: skipped while pyproject.toml and wheelhouse.py are unchanged. No root needed.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
py=${VENV:-$root/.venv}/bin/python
wheelhouse="$root/.tools/dist-wheelhouse"

say() { printf '    70-dist-wheelhouse: %s\n' "$*" >&2; }

want=$(cat "$root/pyproject.toml" "$root/scripts/dist/wheelhouse.py" | sha256sum | cut -d' ' -f1)
stamp="$wheelhouse/.toolhost-stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  say "up to date ($(ls "$wheelhouse" | grep -c '\.whl$') wheels)"
  exit 0
fi
mkdir -p "$wheelhouse"
say "downloading into $wheelhouse"
"$py" "$root/scripts/dist/wheelhouse.py" "$wheelhouse"
echo "$want" > "$stamp"
