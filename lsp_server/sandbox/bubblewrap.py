"""The bubblewrap (bwrap) command line for one sandboxed command: pure, no I/O but lexists.

Layout, in mount order (later mounts cover earlier ones):
  the whole filesystem read-only; a fresh /dev and /proc (the PID namespace's own); a
  private /tmp (with the home folder, PATH entries and the server's interpreter re-bound
  read-only when they live under /tmp); each
  workspace root writable (read-only in read-only mode), bound after
  /tmp so a workspace under /tmp stays visible; the protected names inside each root
  (.git, .toolhost.toml) read-only again; the command's own state folder writable.
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

from lsp_server.sandbox.under_tmp import folders_under_tmp

FORWARDER = Path(__file__).with_name("forwarder.py")


@attrs.frozen
class BubblewrapLayout:
    bwrap: str
    """The bwrap executable."""
    roots: tuple[Path, ...]
    """Workspace roots (resolved)."""
    writable: bool
    """Roots are writable (workspace-write) or read-only (read-only mode)."""
    protected: tuple[str, ...] = (".git", ".toolhost.toml")
    """Names inside each root kept read-only; missing ones are skipped."""
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

    namespace: ClassVar[bool] = True
    """Its processes live in a PID namespace: the shell's EXIT trap lists leftovers."""

    def wrap(
        self, argv: Sequence[str], cwd: Path, state_dir: Path, keep_daemons: bool = False
    ) -> list[str]:
        """`keep_daemons` cannot hold here: the namespace ends with the command."""
        return bubblewrap_argv(self, argv, cwd, state_dir)


def _mount_points(layout: BubblewrapLayout, state_dir: Path) -> list[str]:
    if not layout.confined:
        return ["--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc"]
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for folder in layout.under_tmp:
        args += ["--ro-bind-try", str(folder), str(folder)]
    bind = "--bind" if layout.writable else "--ro-bind"
    for root in layout.roots:
        args += [bind, str(root), str(root)]
    if layout.writable:
        for root in layout.roots:
            for name in layout.protected:
                path = root / name
                if os.path.lexists(path):
                    # -try: a name removed since the check must not stop the command.
                    args += ["--ro-bind-try", str(path), str(path)]
    for folder in layout.read_only_within:
        args += ["--ro-bind-try", str(folder), str(folder)]
    args += ["--bind", str(state_dir), str(state_dir)]
    if layout.proxy_socket is not None:
        proxy_folder = str(layout.proxy_socket.parent)
        args += ["--ro-bind", proxy_folder, proxy_folder]
    return args


def bubblewrap_argv(
    layout: BubblewrapLayout, argv: Sequence[str], cwd: Path, state_dir: Path
) -> list[str]:
    """`bwrap ... -- argv`, run in `cwd`; `state_dir` is the command's own writable folder."""
    args = [layout.bwrap, *_mount_points(layout, state_dir)]
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
