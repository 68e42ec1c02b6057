"""The bubblewrap (bwrap) command line for one sandboxed command (`bubblewrap_argv`: no I/O
but listing the roots; `BubblewrapLayout.wrap` also holds the placeholders).

Layout, in mount order (later mounts cover earlier ones):
  the whole filesystem read-only; a fresh /dev and /proc (the PID namespace's own); a
  private /tmp (with the home folder, PATH entries and the server's interpreter re-bound
  read-only when they live under /tmp); each
  workspace root writable (read-only in read-only mode), bound after
  /tmp so a workspace under /tmp stays visible; the protected names inside each root
  (protected.py: .git, .toolhost.toml, .vscode ...) read-only again, a missing one held by
  a placeholder (placeholders.py), and a repository's info/exclude naming those, so that
  git in the command does not list them (git_view.py); the user's credential files and
  folders outside the roots hidden (hidden.py: an empty read-only file or tmpfs over
  each); the command's own state folder writable.
Then: no network unless allowed, a new PID namespace (every process the command starts is
in it and dies with it), die-with-parent (the server's death kills the sandbox), and a new
session (no controlling terminal to inject keystrokes into).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import attrs

from lsp_server.sandbox.git_view import exclude_views
from lsp_server.sandbox.hidden import HiddenPath
from lsp_server.sandbox.placeholders import PlaceholderHolds
from lsp_server.sandbox.protected import ProtectedPaths
from lsp_server.sandbox.protected_scan import scan_roots
from lsp_server.sandbox.under_tmp import folders_under_tmp

FORWARDER = Path(__file__).with_name("forwarder.py")
HIDDEN_FILE = "hidden-credential"
"""The empty file in the command's state folder bound read-only over each hidden file."""


@attrs.frozen
class BubblewrapLayout:
    bwrap: str
    """The bwrap executable."""
    roots: tuple[Path, ...]
    """Workspace roots (resolved)."""
    writable: bool
    """Roots are writable (workspace-write) or read-only (read-only mode)."""
    protected: ProtectedPaths = attrs.Factory(ProtectedPaths)
    """Paths inside each root kept read-only, whether or not they exist (protected.py)."""
    network: bool = False
    read_only_within: tuple[Path, ...] = ()
    """Folders inside the roots bound read-only again: toolhost's own state and config
    folders, where a root holds them (an allowed home folder)."""
    under_tmp: tuple[Path, ...] = attrs.Factory(folders_under_tmp)
    """Folders under /tmp to keep visible (read-only) over the private /tmp: the home
    folder (~/.gitconfig still applies, ~ stays read-only), PATH entries and the server's
    own interpreter when they live there (under_tmp.py)."""
    confined: bool = True
    """False: the filesystem, /dev and the network are the host's (a command approved to
    run outside the sandbox); the PID namespace and die-with-parent still hold, so nothing
    it starts outlives it or the server."""
    proxy_socket: Path | None = None
    """The network proxy's Unix socket (netproxy.py): bound in, and the command runs under
    the forwarder that points HTTP(S)_PROXY at it."""
    hidden: tuple[HiddenPath, ...] = ()
    """The user's credential files and folders outside the roots (hidden.py): each is
    replaced by an empty read-only file or folder in the sandbox."""
    holds: PlaceholderHolds = attrs.field(factory=PlaceholderHolds, eq=False)
    """The placeholders each command in flight holds, by its state folder."""

    namespace: ClassVar[bool] = True
    """Its processes live in a PID namespace: the shell's EXIT trap lists leftovers."""

    def wrap(
        self, argv: Sequence[str], cwd: Path, state_dir: Path, keep_daemons: bool = False
    ) -> list[str]:
        """`keep_daemons` cannot hold here: the namespace ends with the command. Holds the
        protected names (placeholders.py) until `release(state_dir)`."""
        if not (self.confined and self.writable):
            return bubblewrap_argv(self, argv, cwd, state_dir)
        found = scan_roots(self.roots, self.protected)
        holding = self.holds.take(state_dir, found.held)
        # A protected name that is no plain file or folder (a symlink) is bound as it is.
        kept = {str(path) for path in holding.held}
        present = [*found.present]
        for target in found.held:
            path = target.path
            if str(path) not in kept and os.path.lexists(path):
                present.append(path)
        return bubblewrap_argv(
            self,
            argv,
            cwd,
            state_dir,
            held=holding.held,
            present=present,
            frozen=holding.frozen,
            pinned=found.pinned,
            views=exclude_views(self.roots, holding.held, state_dir),
        )

    def release(self, state_dir: Path) -> None:
        """The command ended: its placeholders go unless another command still uses them."""
        self.holds.release(state_dir)


@attrs.frozen
class _ProtectedMounts:
    held: Sequence[Path]
    present: Sequence[Path]
    frozen: Sequence[Path]
    pinned: Sequence[Path]
    views: Sequence[tuple[Path, Path]] = ()


def _mount_points(layout: BubblewrapLayout, state_dir: Path, binds: _ProtectedMounts) -> list[str]:
    if not layout.confined:
        return ["--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc"]
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for folder in layout.under_tmp:
        args += ["--ro-bind-try", str(folder), str(folder)]
    bind = "--bind" if layout.writable else "--ro-bind"
    for root in layout.roots:
        args += [bind, str(root), str(root)]
    if any(Path("/dev").is_relative_to(root) for root in layout.roots):
        # A root of `/` binds the host's /dev again, without its devices (a user
        # namespace's mounts are nodev: `2>/dev/null` fails): the sandbox's own, again.
        args += ["--dev", "/dev", "--proc", "/proc"]
    if layout.writable:
        for path in binds.frozen:
            args += ["--ro-bind", str(path), str(path)]
        for path in binds.pinned:  # before the read-only binds inside them
            args += ["--bind-try", str(path), str(path)]
        for path in binds.present:
            # -try: a name removed since the check must not stop the command.
            args += ["--ro-bind-try", str(path), str(path)]
        for path in binds.held:
            args += ["--ro-bind", str(path), str(path)]  # exists until the command ends
        for copy, original in binds.views:  # after .git's own read-only bind
            args += ["--ro-bind", str(copy), str(original)]
    for folder in layout.read_only_within:
        args += ["--ro-bind-try", str(folder), str(folder)]
    args += _hiding(layout.hidden, state_dir)
    args += ["--bind", str(state_dir), str(state_dir)]
    if layout.proxy_socket is not None:
        proxy_folder = str(layout.proxy_socket.parent)
        args += ["--ro-bind", proxy_folder, proxy_folder]
    return args


def _hiding(hidden: Sequence[HiddenPath], state_dir: Path) -> list[str]:
    """An empty read-only tmpfs over each hidden folder, the state folder's empty file
    (read-only) over each hidden file. The empty file is made here, once per command."""
    args: list[str] = []
    empty = state_dir / HIDDEN_FILE
    if any(not h.folder for h in hidden) and not empty.exists():
        empty.touch(mode=0o444)
    for item in hidden:
        target = str(item.path)
        if item.folder:
            args += ["--tmpfs", target, "--remount-ro", target]
        else:
            args += ["--ro-bind", str(empty), target]
    return args


def bubblewrap_argv(
    layout: BubblewrapLayout,
    argv: Sequence[str],
    cwd: Path,
    state_dir: Path,
    *,
    held: Sequence[Path] = (),
    present: Sequence[Path] | None = None,
    frozen: Sequence[Path] = (),
    pinned: Sequence[Path] | None = None,
    views: Sequence[tuple[Path, Path]] = (),
) -> list[str]:
    """`bwrap ... -- argv`, run in `cwd`; `state_dir` is the command's own writable folder
    (the empty file that hides credential files is made in it).
    `held`: protected paths held for this command (placeholders.py); `present`: existing
    ones bound as they are (None: every protected path that exists now, nothing held);
    `frozen`: folders bound read-only as a whole (a missing name in them could not be
    held: the command could otherwise `chmod u+w` the folder and create it); `pinned`:
    folders bound onto themselves, so that they cannot be renamed away from the protected
    paths they hold (None: as the scan finds them); `views`: (copy, original) files bound
    read-only over the original (git_view.py: info/exclude naming the placeholders)."""
    if (present is None or pinned is None) and layout.confined and layout.writable:
        found = scan_roots(layout.roots, layout.protected)
        if present is None:
            present = [*found.present, *(t.path for t in found.held if os.path.lexists(t.path))]
        pinned = found.pinned if pinned is None else pinned
    binds = _ProtectedMounts(held, present or (), frozen, pinned or (), views)
    args = [layout.bwrap, *_mount_points(layout, state_dir, binds)]
    if layout.confined and not layout.network:
        args.append("--unshare-net")
    args += ["--unshare-pid", "--die-with-parent", "--new-session"]
    if layout.confined:
        # Run as root, bwrap keeps every capability: `mount -o remount,rw /` would undo
        # the read-only filesystem. Without capabilities the mounts stay as laid out.
        args += ["--cap-drop", "ALL", "--setenv", "TMPDIR", "/tmp"]
    if layout.confined and layout.proxy_socket is not None:
        python = os.path.realpath(sys.executable)
        argv = [python, "-I", "-S", str(FORWARDER), str(layout.proxy_socket), "--", *argv]
    args += ["--chdir", str(cwd), "--", *argv]
    return args
