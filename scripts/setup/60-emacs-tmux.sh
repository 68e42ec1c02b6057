#!/usr/bin/env bash
# Terminal editors for the real-editor tests: Debian's emacs-nox (28) and elpa-eglot
# (eglot 1.9; Emacs 29+ has eglot built in) for tests/emacs, and tmux, in which
# tests/nvim runs Neovim on a real terminal screen and reads it back. apt-get runs only as
# root; otherwise those tests skip with a reason (and fail in CI, where
# TOOLHOST_REQUIRE_CLIENTS=1). Idempotent: nothing is installed when all are there.
set -euo pipefail

say() { printf '    60-emacs-tmux: %s\n' "$*" >&2; }

packages=(emacs-nox elpa-eglot tmux)
missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
  say "emacs-nox, elpa-eglot and tmux already installed"
elif [ "$(id -u)" = "0" ]; then
  say "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  say "not root: cannot install ${missing[*]}; the Emacs tests will skip (or fail in CI)"
  exit 0
fi
# Fail here, not in a test, when eglot cannot be loaded.
# Debian's elpa-* packages live in /usr/share/emacs/site-lisp/elpa (tests/emacs adds it too).
emacs --batch -Q --eval '(progn (add-to-list (quote package-directory-list) "/usr/share/emacs/site-lisp/elpa") (package-initialize) (require (quote eglot)) (princ (format "    60-emacs-tmux: Emacs %s, eglot loads\n" emacs-version)))' \
  || { echo "eglot does not load in this Emacs" >&2; exit 1; }
