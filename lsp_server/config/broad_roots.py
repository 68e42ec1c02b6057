"""Roots that are not a workspace, and toolhost's own folders inside the ones that are.

A workspace root is where commands run writable and edits land unasked. A home folder as
a root hands the agent `~/.bashrc`, `~/.ssh` and every project the user has; `/` or a
folder above home hands it every file the user may write; a system folder (/usr, /etc,
/tmp ...) holds what other programs and users rely on. Such a root is "broad": every face
refuses it, before anything reads or walks it, unless the user's own config file (or the
managed file) sets `workspace.allow_broad_roots = true`. A workspace `.toolhost.toml` or an
editor setting never allows it: the agent could write those.

A root inside toolhost's own state or config folder is refused whatever that setting says
(the agent would write its own trust records and audit log). Where an allowed root holds
those folders, `own_folders_inside` names them, so that checkpoints, their watcher and the
sandbox's writable set leave them out.

The standard library only: `toolhost mcp`'s front asks before anything else is imported.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal, NamedTuple

from lsp_server.core.errors import ToolError
from lsp_server.home.dirs import Dirs

BROAD_ROOT = "workspace.broad_root"
"""The refusal's stable code (also core.errors.BROAD_ROOT)."""

Face = Literal["lsp", "mcp", "acp", "cli"]

# Folders whose files belong to the system, other programs or other users (the folder
# itself: a project below one of them, such as /srv/app or /opt/tool, is fine), as real
# paths: where /bin, /lib or /sbin link into /usr, and macOS's /tmp, /var and /etc into
# /private, the targets are listed too (compared as text: no system call at start).
SYSTEM_FOLDERS = frozenset((
    "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media",
    "/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/snap", "/srv", "/sys", "/tmp",
    "/usr", "/usr/bin", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libx32", "/usr/local",
    "/usr/sbin", "/usr/share", "/var", "/var/lib", "/var/tmp", "/Users", "/Applications",
    "/Library", "/System", "/Volumes", "/private", "/private/etc", "/private/tmp",
    "/private/var",
))  # fmt: skip

_RECOVERY: dict[Face, str] = {
    "lsp": "open a project folder in the editor instead",
    "mcp": "start toolhost mcp with --root PROJECT, or from inside the project folder",
    "acp": "open a project folder (start the agent's session there), or start toolhost acp "
    "with --root PROJECT",
    "cli": "pass --root PROJECT, or run it from inside the project folder",
}


def _real(path: str | Path) -> Path:
    return Path(os.path.realpath(Path(path).expanduser()))


def home_folders() -> list[Path]:
    """$HOME and the account's home folder (they differ under sudo and in tests)."""
    found: list[Path] = []
    candidates = [os.environ.get("HOME") or ""]
    with contextlib.suppress(KeyError):  # an id with no account (containers)
        candidates.append(pwd.getpwuid(os.getuid()).pw_dir)
    for raw in candidates:
        if raw and Path(raw).is_absolute():
            home = _real(raw)
            if home not in found:
                found.append(home)
    return found


def why_broad(root: Path) -> str | None:
    """What makes `root` (a real path) no workspace, said for a person; None: it may be one."""
    if root == Path(root.anchor):
        return "the filesystem root"
    for home in home_folders():
        if root == home:
            return "your home folder"
        if root in home.parents:
            return f"a folder above your home folder {home}"
    if str(root) in SYSTEM_FOLDERS:
        return "a system folder (its files belong to other programs and users)"
    return None


def own_folders(dirs: Dirs) -> list[Path]:
    """toolhost's state, config and attach folders (real paths, whether or not they exist)."""
    folders: list[Path] = []
    for folder in (dirs.state, dirs.config, dirs.attach_folder):
        real = _real(folder)
        if real not in folders:
            folders.append(real)
    return folders


def own_folders_inside(root: Path, dirs: Dirs | Iterable[Path]) -> list[str]:
    """toolhost's own folders strictly below `root`, relative to it ("/"-separated)."""
    folders = own_folders(dirs) if isinstance(dirs, Dirs) else [_real(f) for f in dirs]
    real_root = _real(root)
    inside: list[str] = []
    for folder in folders:
        if real_root in folder.parents and not any(f in folder.parents for f in folders):
            relative = folder.relative_to(real_root).as_posix()
            if relative not in inside:
                inside.append(relative)
    return inside


def mounts_inside(root: Path, mountinfo: str = "/proc/self/mountinfo") -> list[str]:
    """Mount points strictly below `root` (relative, "/"), from the kernel's list: other
    file systems (/proc bound in, a tmpfs, a network share) that no snapshot or watch of
    the root enters. Empty where the list cannot be read."""
    try:
        lines = Path(mountinfo).read_text("utf-8", "surrogateescape").splitlines()
    except OSError:
        return []
    prefix = str(_real(root)).rstrip("/") + "/"
    inside = []
    for line in lines:
        fields = line.split(" ")
        if len(fields) > 4:
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
            if point.startswith(prefix) and point != prefix:
                inside.append(point[len(prefix) :].rstrip("/"))
    return sorted(set(inside))


def exclude_lines(relative_folders: Iterable[str]) -> str:
    """gitignore lines that match exactly these folders below the root (wildcards escaped)."""
    lines = []
    for path in relative_folders:
        escaped = "".join(f"\\{c}" if c in "*?[]\\" else c for c in path)
        literal = "\\" + escaped if escaped[:1] in ("#", "!") else escaped
        lines.append(f"/{literal}/\n")
    return "".join(lines)


def regenerable_lines(names: Iterable[str]) -> str:
    """gitignore lines that match folders of these names at any depth (wildcards escaped)."""
    lines = []
    for name in names:
        escaped = "".join(f"\\{c}" if c in "*?[]\\" else c for c in name.strip("/"))
        if escaped and "/" not in escaped:
            lines.append(("\\" + escaped if escaped[:1] in ("#", "!") else escaped) + "/\n")
    return "".join(lines)


def _inside_own_folder(root: Path, dirs: Dirs) -> Path | None:
    for folder in own_folders(dirs):
        if root == folder or folder in root.parents:
            return folder
    return None


class BroadRoot(NamedTuple):
    """A root every face refuses, and why."""

    root: Path
    why: str
    config_file: Path
    settable: bool = True
    """False for a root inside toolhost's own folders: no setting allows it."""

    @property
    def cause(self) -> str:
        if not self.settable:
            return (
                f"{self.root} is {self.why}, not a project: toolhost does not work there, "
                "so that no command can change its own records"
            )
        return (
            f"{self.root} is {self.why}, not a project folder: toolhost does not work there, "
            "so that no command or edit reaches every file you own (~/.bashrc, ~/.ssh, your "
            "other projects)"
        )

    def recovery(self, face: Face) -> str:
        text = _RECOVERY[face]
        if not self.settable:
            return text
        return (
            f"{text}; or, to work there anyway, set `allow_broad_roots = true` under "
            f"[workspace] in {_shown(self.config_file)}"
        )

    def message(self, face: Face) -> str:
        """The one line each face shows: `workspace.broad_root: <cause>; <recovery>`."""
        return f"{BROAD_ROOT}: {self.cause}; {self.recovery(face)}"


def _shown(path: Path) -> str:
    """`path` with the home folder written as ~ (how the user will type it)."""
    home = os.environ.get("HOME") or ""
    if home and home != "/" and (path == Path(home) or Path(home) in path.parents):
        return "~/" + path.relative_to(home).as_posix()
    return str(path)


def allowed_by_user(dirs: Dirs) -> bool:
    """workspace.allow_broad_roots from the user's own config file and the managed file:
    the layers are loaded without any root, so no workspace file (nor an editor setting)
    takes part."""
    from lsp_server.config.layers import load_layers  # attrs and cattrs: only when asked

    return load_layers(None, [], dirs).config.workspace.allow_broad_roots is True


def refused_root(roots: Sequence[Path], dirs: Dirs) -> BroadRoot | None:
    """The first of `roots` no face may serve, or None. Cheap for an ordinary project: the
    config is read only when a root is broad."""
    broad: BroadRoot | None = None
    for raw in roots:
        root = _real(raw)
        own = _inside_own_folder(root, dirs)
        if own is not None:
            inside = f"inside toolhost's own folder {own}"
            return BroadRoot(root, inside, dirs.user_config_file, settable=False)
        why = why_broad(root)
        if why is not None and broad is None:
            broad = BroadRoot(root, why, dirs.user_config_file)
    if broad is not None and allowed_by_user(dirs):
        return None
    return broad


def refuse_broad_roots(roots: Sequence[Path], extra_roots: Iterable[str], dirs: Dirs) -> None:
    """Every face refuses a home folder or `/` before it builds a runtime, with its own words;
    compose refuses it too (the config's extra roots as well), so that no other way in
    (`toolhost revert`, `checkpoints`) builds a runtime over one."""
    refused = refused_root([*roots, *map(Path, extra_roots)], dirs)
    if refused is not None:
        raise ToolError(BROAD_ROOT, refused.cause, refused.recovery("cli"))
