# Sourced by scripts/setup/*.sh: install an npm project pinned by its lock file into a folder
# under .tools/, once per lock (a stamp holds the lock's hash), with the machine's node/npm
# (apt-get installs them when run as root and they are missing).
#   install_npm_locked SRC DEST LABEL [ci|install]
# `install` is for a lock `npm ci` refuses; it still installs exactly the locked versions.

say() { printf '    %s\n' "$*" >&2; }

install_npm_locked() {
  local src=$1 dest=$2 label=$3 verb=${4:-ci}
  if ! command -v npm >/dev/null 2>&1; then
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
      say "apt-get install nodejs npm"
      apt-get install -y -qq nodejs npm >/dev/null 2>&1 || {
        apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
      }
    else
      say "SKIP $label: npm not found (apt-get install nodejs npm)"
      return 0
    fi
  fi
  local lock_sum
  lock_sum=$(sha256sum "$src/package-lock.json" | cut -d' ' -f1)
  if [ -f "$dest/.installed" ] && [ "$(cat "$dest/.installed")" = "$lock_sum" ]; then
    say "$label already installed"
    return 0
  fi
  say "npm $verb (locked) $label into $dest"
  mkdir -p "$dest"
  cp "$src/package.json" "$src/package-lock.json" "$dest/"
  (cd "$dest" && npm "$verb" --ignore-scripts --no-audit --no-fund --loglevel=error)
  echo "$lock_sum" > "$dest/.installed"
}
