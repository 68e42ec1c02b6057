"""glob on ripgrep: `rg --files` lists what the ignore rules keep, a compiled glob picks
the matches, and only the matches are looked at again (a stat each, for the order).

What rg is asked, so that the answer is the Python walker's (listing.py) on any tree:
- no `--glob` for the pattern itself: an rg glob is an override, and an override
  re-includes what `.gitignore` ignores and what is hidden. The pattern's last
  component, when it is a plain name glob (`*.go`, `test_*.{ts,tsx}`), goes to rg as a
  file type instead (`--type-add`), which narrows the listing after the ignore rules;
  a pattern without `**` also bounds the depth (`--max-depth`).
- `--hidden` only when the pattern spells a dot (the walker's rule), and the compiled
  glob (wcmatch's own regex of the pattern) then decides each path exactly: a type also
  lets hidden files through, the glob does not.
- the folders ls and glob never show (NOISE_DIRS, unless the pattern names one) and the
  secret deny list as `!` overrides, which only ever take away.
- symbolic links are not followed and not listed, as the walker does (rg's default).
"""

from __future__ import annotations

import heapq
import os
import re
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import attrs
from wcmatch import glob

from lsp_server.fs import beneath

GLOB_FLAGS = glob.GLOBSTAR | glob.BRACE
# A last component rg's type globs read exactly as wcmatch does: names, `*`, `?`, one
# level of `{a,b}` (brackets and backslashes differ between the two dialects).
_PLAIN_NAME = re.compile(r"[\w.*?+\-]*(\{[\w.*?+\-,]*\}[\w.*?+\-]*)*")


@attrs.define
class Listed:
    """The matches of one `rg --files` run, newest first, cut to `limit`."""

    paths: list[str]
    """Relative to the listed folder, "/"-separated."""
    total: int
    timed_out: bool
    unreadable: list[tuple[str, str]]
    """(path relative to the listed folder, why) for what rg could not open."""


def rg_command(
    rg: Path, rest: str, *, hidden: bool, skip_dirs: Iterable[str], excluded: Iterable[str] = ()
) -> list[str]:
    """The listing. `excluded` globs go to rg as `!` overrides; glob checks the deny list
    on its matches instead (rg tests every override against every path it meets: the 22
    of the deny list and the skipped folders made `rg --files` 45 % slower)."""
    command = [str(rg), "--files", "--null", "--no-config", "--no-require-git"]
    command += ["--no-ignore-global", "--color=never"]
    if hidden:
        command.append("--hidden")
    name = rest.rsplit("/", 1)[-1]
    if name and "**" not in name and _PLAIN_NAME.fullmatch(name) and name.count("{") <= 1:
        command += [f"--type-add=globbed:{name}", "--type=globbed"]
    if "**" not in rest:
        command.append(f"--max-depth={rest.count('/') + 1}")
    # A hidden folder is not entered without --hidden anyway.
    skipped = sorted(name for name in skip_dirs if hidden or not name.startswith("."))
    command += [f"--glob=!{name}/" for name in skipped]
    command += [f"--glob=!{pattern}" for pattern in excluded]
    return [*command, "--", "."]


def compiled(rest: str) -> Callable[[str], bool]:
    """wcmatch's own regex of the glob (what `glob.globmatch` runs), as one pattern."""
    includes, _ = glob.translate(rest, flags=GLOB_FLAGS)
    match = re.compile("|".join(f"(?:{regex})" for regex in includes)).match
    return lambda path: match(path) is not None


def _matcher(command: list[str], rest: str) -> Callable[[str], bool]:
    """The test each listed path still needs. `**/NAME` or `NAME` whose NAME went to rg
    as a type without braces: rg already matched the name, and all wcmatch adds is that
    no part of the path starts with a dot (its `*` and `**` never match one; rg lets a
    hidden file through a type, and a folder a `!` line re-includes). Else the regex,
    whose tempered loops cost microseconds a path."""
    name = rest.rsplit("/", 1)[-1]
    typed = f"--type-add=globbed:{name}" in command and "{" not in name
    if typed and not name.startswith(".") and rest in (name, f"**/{name}"):
        return lambda path: "/." not in path and not path.startswith(".")
    return compiled(rest)


def list_matching(
    rg: Path,
    root: Path,
    start: Path,
    rest: str,
    *,
    hidden: bool,
    skip_dirs: Iterable[str],
    excluded: Callable[[str], bool] | None,
    timeout_seconds: float,
    limit: int,
    keep: Callable[[str], bool] | None = None,
) -> Listed:
    """Files under `start` (reached beneath `root` without following a link) whose path
    relative to `start` matches `rest`; the `limit` newest (ties in path order), and how
    many there are. `excluded` (a path relative to `root`) and `keep` (relative to
    `start`) drop a match before it is counted."""
    try:
        dir_fd = beneath.open_dir(root, start.relative_to(root).parts)
    except OSError as exc:
        raise beneath.translate(exc, str(start), start) from None
    try:
        command = rg_command(rg, rest, hidden=hidden, skip_dirs=skip_dirs)
        inside = start.relative_to(root).as_posix() + "/" if start != root else ""
        out, err, timed_out = _run(command, dir_fd, timeout_seconds)
        matches = _matcher(command, rest)
        keyed: list[tuple[int, list[str], str]] = []
        text = os.fsdecode(out)
        for rel in text[: text.rfind("\0") + 1].split("\0")[:-1]:  # a cut record: no NUL
            rel = rel.removeprefix("./")
            if not matches(rel) or (keep is not None and not keep(rel)):
                continue
            if excluded is not None and excluded(inside + rel):
                continue
            try:
                mtime = os.stat(rel, dir_fd=dir_fd, follow_symlinks=False).st_mtime_ns
            except OSError:
                continue
            keyed.append((-mtime, rel.split("/"), rel))
    finally:
        os.close(dir_fd)
    newest = heapq.nsmallest(limit, keyed)
    return Listed([rel for _, _, rel in newest], len(keyed), timed_out, _unreadable(err))


def _run(command: list[str], dir_fd: int, seconds: float) -> tuple[bytes, bytes, bool]:
    proc = subprocess.Popen(
        command,
        cwd=f"/proc/self/fd/{dir_fd}",
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        pass_fds=(dir_fd,),
    )
    started = time.monotonic()
    try:
        out, err = proc.communicate(timeout=max(seconds, 0.0))
        return out, err, False
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()  # what rg had written: nothing is lost
        return out, err, time.monotonic() - started >= seconds
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _unreadable(stderr: bytes) -> list[tuple[str, str]]:
    """rg's `rg: ./PATH: why (os error N)` lines as (PATH, why)."""
    found = []
    for line in os.fsdecode(stderr).splitlines():
        path, _, why = line.removeprefix("rg: ").rpartition(": ")
        if path:
            found.append((path.removeprefix("./"), why.split(" (os error")[0]))
    return found
