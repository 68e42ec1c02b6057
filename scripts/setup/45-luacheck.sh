#!/usr/bin/env bash
# luacheck, the Lua linter `./run lint` runs over the Neovim plugin (extension/nvim, set up
# by its .luacheckrc): Debian's lua-check. apt-get runs only as root; otherwise this says
# how to install it and `./run lint` skips luacheck with the same note (in CI, where
# CI=true, a missing luacheck is a failure, here and in `./run lint`).
# Idempotent: nothing is installed when it is there.
set -euo pipefail

say() { printf '    45-luacheck: %s\n' "$*" >&2; }

if command -v luacheck >/dev/null 2>&1; then
  say "luacheck already installed"
elif [ "$(id -u)" = "0" ]; then
  say "apt-get install lua-check"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends lua-check >/dev/null
else
  say "not root: cannot install luacheck (as root: apt-get install lua-check)"
  if [ "${CI:-}" = "true" ]; then
    say "in CI the Lua lint of extension/nvim must run: failing"
    exit 1
  fi
  say "./run lint will skip the Lua lint of extension/nvim"
  exit 0
fi
# Fail here, not in the lint step, when it cannot run.
say "$(luacheck --version | head -1)"
