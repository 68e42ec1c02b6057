"""The user's own credential files and folders below the home folder: the one list that
both the secret values (sources.py: each file's values are known secrets, hidden from
every result) and the sandbox (sandbox/hidden.py: each one that exists is hidden from
sandboxed commands, so that no encoding of it can reach the model) are taken from.
"""

from __future__ import annotations

USER_CREDENTIAL_FILES = (
    ".aws/credentials",
    ".config/gh/hosts.yml",
    ".config/hub",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".docker/config.json",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".kube/config",
    ".terraform.d/credentials.tfrc.json",
    ".config/gcloud/application_default_credentials.json",
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".gemini/oauth_creds.json",
    ".ssh/id_rsa",
    ".ssh/id_ecdsa",
    ".ssh/id_ed25519",
    ".ssh/id_dsa",
)
"""Files (relative to the home folder) whose values are known secrets; the sandbox hides
each one that exists."""

USER_CREDENTIAL_FOLDERS = (
    ".ssh",
    ".gnupg",
    ".password-store",
    ".aws",
    ".config/gcloud",
    ".azure",
)
"""Folders (relative to the home folder) the sandbox hides as a whole: their keys have any
name (`~/.ssh/work_key`, `~/.gnupg/private-keys-v1.d/*`, `~/.aws/sso/cache/*.json`), so no
list of files covers them. Their values are not parsed (a folder is no file to read)."""
