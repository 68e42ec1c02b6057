"""The wrappers that run another command after their own options, and the shells.

wrappers.py peels them off (`nice -n 5 touch f` runs `touch f`): each entry says which of
the wrapper's options take a value, so `-n 5` is skipped as a value and not taken for
the command.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Wrapper:
    """How a wrapper's own options look, so the wrapped command can be found after them."""

    valued: str = ""
    """Short option letters that take a value (`n` for `nice -n 5`, `-n5` also works)."""
    valued_long: tuple[str, ...] = ()
    """Long options that take a value as the next word unless written `--opt=value`."""
    positionals: int = 0
    """Words after the options that belong to the wrapper (timeout's duration)."""
    assignments: bool = False
    """`NAME=value` words may come before the command (env)."""
    numeric_flags: bool = False
    """`-5` is an option (nice)."""


WRAPPERS: dict[str, Wrapper] = {
    "env": Wrapper(
        valued="uCS",
        valued_long=("--unset", "--chdir", "--split-string"),
        assignments=True,
    ),
    "nice": Wrapper(valued="n", valued_long=("--adjustment",), numeric_flags=True),
    "nohup": Wrapper(),
    "setsid": Wrapper(),
    "timeout": Wrapper(valued="sk", valued_long=("--signal", "--kill-after"), positionals=1),
    "stdbuf": Wrapper(valued="ioe", valued_long=("--input", "--output", "--error")),
    "xargs": Wrapper(
        valued="adEILnPs",
        valued_long=(
            "--arg-file",
            "--delimiter",
            "--eof",
            "--max-lines",
            "--max-args",
            "--max-procs",
            "--max-chars",
            "--process-slot-var",
        ),
    ),
    "command": Wrapper(),
    "exec": Wrapper(valued="a"),
    "builtin": Wrapper(),
    "sudo": Wrapper(
        valued="ugCDhprtTU",
        valued_long=(
            "--user",
            "--group",
            "--close-from",
            "--chdir",
            "--host",
            "--prompt",
            "--role",
            "--type",
            "--command-timeout",
            "--other-user",
        ),
    ),
    "doas": Wrapper(valued="uC"),
    "time": Wrapper(valued="of", valued_long=("--output", "--format")),
    "ionice": Wrapper(valued="cn", valued_long=("--class", "--classdata")),
    "taskset": Wrapper(positionals=1),
    "chroot": Wrapper(valued_long=("--userspec", "--groups"), positionals=1),
    "flock": Wrapper(valued="wE", valued_long=("--timeout", "--conflict-exit-code"), positionals=1),
    "busybox": Wrapper(),
    "runuser": Wrapper(valued="ug", valued_long=("--user", "--group")),
    "strace": Wrapper(valued="oepsuESP", valued_long=("--output",)),
    "unbuffer": Wrapper(),
    "toybox": Wrapper(),
    "pkexec": Wrapper(valued_long=("--user",)),
    "chrt": Wrapper(valued="TPD", positionals=1),
    "prlimit": Wrapper(valued="p", valued_long=("--pid", "--output")),
    "setpriv": Wrapper(
        valued_long=(
            "--reuid",
            "--regid",
            "--groups",
            "--inh-caps",
            "--ambient-caps",
            "--bounding-set",
            "--securebits",
            "--pdeathsig",
            "--selinux-label",
            "--apparmor-profile",
        )
    ),
    "unshare": Wrapper(valued="SGRw", valued_long=("--setuid", "--setgid", "--root", "--wd")),
    "nsenter": Wrapper(valued="tSGe", valued_long=("--target", "--setuid", "--setgid")),
    "systemd-run": Wrapper(
        valued="pEMuHG",
        valued_long=(
            "--unit",
            "--property",
            "--description",
            "--slice",
            "--setenv",
            "--uid",
            "--gid",
            "--working-directory",
            "--nice",
            "--machine",
            "--host",
        ),
    ),
    "firejail": Wrapper(),
    "ltrace": Wrapper(valued="oeaAsuDnS", valued_long=("--output",)),
    "catchsegv": Wrapper(),
    "coproc": Wrapper(),
    "screen": Wrapper(valued="cehpStT"),
    "valgrind": Wrapper(),
    "fakeroot": Wrapper(valued="ils"),
    "fakechroot": Wrapper(valued="ceEbl"),
    "torsocks": Wrapper(valued="uapP"),
    "proxychains": Wrapper(valued="f"),
    "proxychains4": Wrapper(valued="f"),
    "xvfb-run": Wrapper(valued="nsfeplw"),
    "dbus-run-session": Wrapper(valued_long=("--config-file", "--dbus-daemon")),
    "faketime": Wrapper(valued="m", positionals=1),
    "envdir": Wrapper(positionals=1),
    "setuidgid": Wrapper(positionals=1),
    "chpst": Wrapper(valued="ugUenlmdosStv"),
    "arch": Wrapper(),
    "dtach": Wrapper(valued="aAcnNper"),  # the mode letter takes the socket
}
SHELLS = frozenset(
    (
        "sh",
        "bash",
        "dash",
        "zsh",
        "ksh",
        "mksh",
        "ash",
        "busybox-sh",
        "rbash",
        "yash",
        "posh",
        "fish",
        "csh",
        "tcsh",
    )
)
