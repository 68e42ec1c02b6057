"""Whether two processes are confined alike: a warm process must never hand a runtime to a
front that is more confined than itself (a sandboxed shell command starting `toolhost mcp
--warm` would leave its sandbox), nor a less confined one (its runtime would be boxed in
unasked). The standard library only."""

from __future__ import annotations

from pathlib import Path

NAMESPACES = ("cgroup", "ipc", "mnt", "net", "pid", "user", "uts")
# Landlock needs no_new_privs (unless the caller has CAP_SYS_ADMIN), as a seccomp filter does.
STATUS_FIELDS = (
    "NoNewPrivs",
    "Seccomp",
    "Seccomp_filters",
    "CapInh",
    "CapPrm",
    "CapEff",
    "CapBnd",
    "CapAmb",
)


def confinement(pid: int | str = "self") -> dict[str, str]:
    """What confines process `pid`: its namespaces, root folder, security label and the
    no_new_privs, seccomp and capability lines of its status. Raises OSError."""
    proc = Path("/proc", str(pid))
    found = {f"namespace {name}": str((proc / "ns" / name).readlink()) for name in NAMESPACES}
    root = (proc / "root").stat()
    found["root folder"] = f"{root.st_dev}:{root.st_ino}"
    try:
        label = (proc / "attr" / "current").read_bytes()
        found["security label"] = label.decode("utf-8", "replace").strip("\0\n")
    except OSError:
        found["security label"] = ""  # no LSM that labels processes
    with (proc / "status").open(encoding="utf-8", errors="replace") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in STATUS_FIELDS:
                found[key] = value.strip()
    return found


def differences(pid: int) -> list[str]:
    """What confines process `pid` otherwise than this one (empty: alike)."""
    try:
        theirs = confinement(pid)
        ours = confinement()
    except OSError as exc:
        return [f"its /proc entry cannot be read ({exc.strerror})"]
    return [key for key in sorted(ours.keys() | theirs.keys()) if ours.get(key) != theirs.get(key)]
