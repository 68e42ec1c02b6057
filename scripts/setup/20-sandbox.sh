#!/usr/bin/env bash
# The shell sandbox: Debian `bubblewrap` (bwrap), which bash commands and background jobs
# run under (docs/SANDBOX.md). apt-get only when root; otherwise say what is missing: the
# server then fails closed (every non-read-only command asks) and the sandbox tests fail in
# CI. Idempotent: does nothing when bwrap is installed and can start a sandbox here.
set -euo pipefail

say() { printf '    20-sandbox: %s\n' "$*" >&2; }

installed() { dpkg-query -W -f='${Status}' bubblewrap 2>/dev/null | grep -q "install ok installed"; }

if command -v bwrap >/dev/null 2>&1; then
  say "bubblewrap already installed ($(bwrap --version))"
elif ! command -v apt-get >/dev/null 2>&1; then
  say "no apt-get: install bubblewrap with the system's package manager"
  exit 0
elif [ "$(id -u)" = "0" ]; then
  installed || {
    say "apt-get install bubblewrap"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends bubblewrap >/dev/null 2>&1 || {
      apt-get update -qq >/dev/null
      apt-get install -y -qq --no-install-recommends bubblewrap >/dev/null
    }
  }
else
  say "not root: cannot install bubblewrap (as root: apt-get install bubblewrap)"
  exit 0
fi

# curl: the sandbox's network tests run a real client through the allow-list proxy.
if ! command -v curl >/dev/null 2>&1 && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  say "apt-get install curl"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends curl >/dev/null 2>&1 || {
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends curl >/dev/null
  }
fi

# Fail here, not in a test, when this machine cannot start a sandbox (user namespaces off).
if ! bwrap --ro-bind / / --dev /dev --proc /proc --unshare-pid --unshare-net \
  --die-with-parent --new-session true; then
  say "bwrap is installed but cannot start a sandbox here (user namespaces disabled?)"
  exit 1
fi
say "bwrap starts a sandbox"
