#!/usr/bin/env bash
# The Emacs package compiles without warnings (byte-compiled into a temporary folder, so
# no .elc is left in the checkout). Skipped with a note when Emacs or eglot is missing;
# tests/emacs then skips too (and fails in CI).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

say() { printf '    60-emacs: %s\n' "$*" >&2; }

elpa='(progn (add-to-list (quote package-directory-list) "/usr/share/emacs/site-lisp/elpa") (package-initialize))'
if ! command -v emacs >/dev/null 2>&1 || ! emacs --batch -Q --eval "$elpa" --eval "(require 'eglot)" 2>/dev/null; then
  say "emacs with eglot not installed: skipped (scripts/setup/60-emacs-tmux.sh installs it)"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$root"/extension/emacs/*.el "$tmp"/
say "byte-compile extension/emacs (warnings are errors)"
emacs --batch -Q --eval "$elpa" --eval '(setq byte-compile-error-on-warn t)' -L "$tmp" \
  -f batch-byte-compile "$tmp"/toolhost*.el
