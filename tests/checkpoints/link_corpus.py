"""The corpus of link tricks (tests/checkpoints/link_tricks.py says how one is played)."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

from tests.checkpoints.link_tricks import PROBE, Act, Call, Revert, Trick

# -- steps ---------------------------------------------------------------------------


def bash(call_id: str, command: str) -> Call:
    return Call(call_id, "bash", {"command": command})


def link(name: str, target: str | Callable[[Path, Path], str]) -> Act:
    """Replace `name` (a file or folder, if any) with a symlink, as `os.symlink` would."""

    def do(folder: Path, outside: Path) -> None:
        path = folder / name
        _remove(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target(folder, outside) if callable(target) else target)

    return Act(do)


def to_out(rel: str = "") -> Callable[[Path, Path], str]:
    return lambda _folder, outside: str(outside / rel) if rel else str(outside)


def hard_link(name: str, outside_name: str) -> Act:
    def do(folder: Path, outside: Path) -> None:
        _remove(folder / name)
        os.link(outside / outside_name, folder / name)

    return Act(do)


def device(name: str) -> Act:
    def do(folder: Path, _outside: Path) -> None:
        import pytest

        _remove(folder / name)
        try:
            os.mknod(folder / name, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # as /dev/null
        except PermissionError:
            pytest.skip("making a device needs CAP_MKNOD")

    return Act(do)


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


MADE_EVIL = "mkdir d1 && echo evil > d1/evil.desktop"
LINK = "symbolic link"
OVERWRITE = (bash("c1", "echo v1 > v2.txt"), bash("c2", "echo v2 > v2.txt"))

TRICKS = [
    Trick(
        "symlinked parent to outside: create",
        (
            bash("c1", MADE_EVIL),
            bash("c2", "rm d1/evil.desktop"),
            link("d1", to_out()),
            Revert("c2", ("d1/evil.desktop",), LINK),
        ),
    ),
    Trick(
        "symlinked parent to outside: delete",
        (
            bash("c1", "mkdir d1 && echo same > d1/same.txt"),
            link("d1", to_out()),
            Revert("c1", ("d1/same.txt",), LINK),
        ),
    ),
    Trick(
        "symlinked parent to outside: overwrite",
        (
            bash("c1", "mkdir d1 && echo v1 > d1/v2.txt"),
            bash("c2", "echo v2 > d1/v2.txt"),
            link("d1", to_out()),
            Revert("c2", ("d1/v2.txt",), LINK),
        ),
    ),
    Trick(
        "symlinked parent made by a sandboxed command",
        (
            bash("c1", MADE_EVIL),
            bash("c2", "rm -r d1"),
            bash("c3", "ln -s {out} d1"),
            Revert("c2", ("d1/evil.desktop",), LINK),
        ),
    ),
    Trick(
        "rename of the root's child to a link",
        (
            bash("c1", MADE_EVIL),
            bash("c2", "rm d1/evil.desktop"),
            bash("c3", "ln -s {out} lnk && rmdir d1 && mv -T lnk d1"),
            Revert("c2", ("d1/evil.desktop",), LINK),
        ),
    ),
    Trick(
        "symlink at the last component to an outside file: overwrite",
        (*OVERWRITE, link("v2.txt", to_out("v2.txt")), Revert("c2", ("v2.txt",), LINK)),
    ),
    Trick(
        "symlink at the last component to an outside file: delete",
        (
            bash("c1", "echo same > same.txt"),
            link("same.txt", to_out("same.txt")),
            Revert("c1", ("same.txt",), LINK),
        ),
    ),
    Trick(
        "symlink renamed over the recorded file by a sandboxed command",
        (
            *OVERWRITE,
            bash("c3", "ln -s {out}/v2.txt tmp-link && mv -f tmp-link v2.txt"),
            Revert("c2", ("v2.txt",), LINK),
        ),
    ),
    Trick(
        "dangling symlink to an outside path at a deleted file",
        (
            bash("c1", "echo x > new.txt"),
            bash("c2", "rm new.txt"),
            link("new.txt", to_out("created.txt")),
            Revert("c2", ("new.txt",), LINK),
        ),
    ),
    Trick(
        "dangling symlinked parent to an outside path",
        (
            bash("c1", "mkdir d1 && echo x > d1/x.txt"),
            bash("c2", "rm -r d1"),
            link("d1", to_out("newdir")),
            Revert("c2", ("d1/x.txt",), LINK),
        ),
    ),
    Trick(
        "symlink loop as a parent",
        (
            bash("c1", "mkdir d1 && echo x > d1/x.txt"),
            bash("c2", "rm -r d1"),
            link("d1", "d1"),
            Revert("c2", ("d1/x.txt",), LINK),
        ),
    ),
    Trick(
        "two symlinks in a loop as a parent",
        (
            bash("c1", "mkdir d1 && echo x > d1/x.txt"),
            bash("c2", "rm -r d1"),
            link("d1", "d2"),
            link("d2", "d1"),
            Revert("c2", ("d1/x.txt",), LINK),
        ),
    ),
    Trick(
        "symlinked grandparent",
        (
            bash("c1", "mkdir -p a/b && echo evil > a/b/evil.desktop"),
            bash("c2", "rm a/b/evil.desktop"),
            link("a", to_out()),
            Revert("c2", ("a/b/evil.desktop",), "the folder {prefix}a is a symbolic link"),
        ),
    ),
    Trick(
        "symlink below a folder the revert must create",
        (
            bash("c1", "mkdir -p x/y/z && echo e > x/y/z/e.txt"),
            bash("c2", "rm -r x"),
            link("x/y", to_out()),
            Revert("c2", ("x/y/z/e.txt",), "the folder {prefix}x/y is a symbolic link"),
        ),
    ),
    Trick(
        "parent replaced by a symlink to /",
        (
            bash("c1", f"mkdir d1 && echo evil > d1/{PROBE}"),
            bash("c2", f"rm d1/{PROBE}"),
            link("d1", "/"),
            Revert("c2", (f"d1/{PROBE}",), LINK),
        ),
    ),
    Trick(
        "parent replaced by a symlink to /proc/self/root",
        (
            bash("c1", f"mkdir d1 && echo evil > d1/{PROBE}"),
            bash("c2", f"rm d1/{PROBE}"),
            link("d1", "/proc/self/root"),
            Revert("c2", (f"d1/{PROBE}",), LINK),
        ),
    ),
    Trick(
        "parent replaced by a symlink inside the root",
        (
            bash("c1", "mkdir d1 d5 && echo x > d1/x.txt"),
            bash("c2", "rm d1/x.txt"),
            link("d1", "d5"),
            Revert("c2", ("d1/x.txt",), LINK),
        ),
    ),
    Trick(
        "hard link of an outside file at a recorded path: overwrite",
        (*OVERWRITE, hard_link("v2.txt", "v2.txt"), Revert("c2", ("v2.txt",), "hard links")),
    ),
    Trick(
        "hard link of an outside file at a recorded path: delete",
        (
            bash("c1", "echo same > same.txt"),
            hard_link("same.txt", "same.txt"),
            Revert("c1", ("same.txt",), "hard links"),
        ),
    ),
    Trick(
        "a recorded file turned into a FIFO",
        (
            *OVERWRITE,
            bash("c3", "rm v2.txt && mkfifo v2.txt"),
            Revert("c2", ("v2.txt",), "named pipe (FIFO)"),
        ),
    ),
    Trick(
        "a recorded file turned into a device",
        (*OVERWRITE, device("v2.txt"), Revert("c2", ("v2.txt",), "character device")),
    ),
    Trick(
        "a folder turned into a file",
        (
            bash("c1", "mkdir d2 && echo x > d2/x.txt"),
            bash("c2", "rm d2/x.txt"),
            bash("c3", "rmdir d2 && echo file > d2"),
            Revert("c2", ("d2/x.txt",), "the folder {prefix}d2 is now a file"),
        ),
    ),
    Trick(
        "write_file's new file under a folder swapped for a link",
        (
            Call("c1", "write_file", {"path": "d1/same.txt", "content": "same\n"}),
            link("d1", to_out()),
            Revert("c1", ("d1/same.txt",), LINK),
        ),
    ),
    Trick(
        "edit_file's change under a folder swapped for a link",
        (
            Call("c1", "write_file", {"path": "d4/v2.txt", "content": "v1\n"}),
            Call("c2", "edit_file", {"path": "d4/v2.txt", "old_string": "v1", "new_string": "v2"}),
            link("d4", to_out()),
            Revert("c2", ("d4/v2.txt",), LINK),
        ),
    ),
    Trick(
        "move_file back into a folder swapped for a link",
        (
            Call("c1", "write_file", {"path": "d1/same.txt", "content": "same\n"}),
            Call(
                "c2", "move_file", {"source_path": "d1/same.txt", "destination_path": "d3/same.txt"}
            ),
            link("d1", to_out()),
            Revert("c2", ("d1/same.txt",), LINK),
        ),
    ),
    Trick(
        "a call that replaced a folder with a link to outside, reverted whole",
        (
            bash("c1", "mkdir d1 && echo same > d1/same.txt"),
            bash("c2", "rm -r d1 && ln -s {out} d1"),
            Revert("c2", reverted=("d1", "d1/same.txt")),
        ),
    ),
    Trick(
        "a call that replaced a folder with a file, reverted whole",
        (
            bash("c1", "mkdir d2 && echo x > d2/x.txt"),
            bash("c2", "rm -r d2 && echo file > d2"),
            Revert("c2", reverted=("d2", "d2/x.txt")),
        ),
    ),
    Trick(
        "revert of a revert after the parent became a link",
        (
            bash("c1", "mkdir d1 && echo same > d1/same.txt"),
            bash("c2", "rm d1/same.txt"),
            Revert("c2", reverted=("d1/same.txt",)),
            link("d1", to_out()),
            Revert("@last", ("d1/same.txt",), LINK),
        ),
    ),
    Trick(
        "revert of a revert after the file became a link",
        (
            *OVERWRITE,
            Revert("c2", reverted=("v2.txt",)),
            link("v2.txt", to_out("v1.txt")),
            Revert("@last", ("v2.txt",), LINK),
        ),
    ),
    Trick(
        "revert of a revert after the file became a hard link",
        (
            *OVERWRITE,
            Revert("c2", reverted=("v2.txt",)),
            hard_link("v2.txt", "v1.txt"),
            Revert("@last", ("v2.txt",), "hard links"),
        ),
    ),
]
