"""Installed as `sitecustomize.py` in the fresh venv of the install tests (a test
instrument, not part of toolhost): every Python process of that venv records each file it
opens, each folder it lists, each program it starts and each folder it changes to that lies
inside the checkout ($TOOLHOST_TEST_FORBIDDEN) in $TOOLHOST_TEST_AUDIT_LOG, one JSON line
each. The tests assert the log stays empty: nothing is read from the repository."""

import json
import os
import sys

_FORBIDDEN = os.environ.get("TOOLHOST_TEST_FORBIDDEN", "")
_LOG = os.environ.get("TOOLHOST_TEST_AUDIT_LOG", "")
_EVENTS = {
    "open": 0,
    "os.listdir": 0,
    "os.scandir": 0,
    "os.chdir": 0,
    "subprocess.Popen": 0,
    "os.exec": 0,
    "os.posix_spawn": 0,
}


def _inside(value):
    if isinstance(value, int):
        return False
    if isinstance(value, bytes):
        value = os.fsdecode(value)
    if not isinstance(value, (str, os.PathLike)):
        return False
    try:
        # Both the path as named and where it leads (the checkout's .venv/bin/python is a
        # symlink to an interpreter outside it).
        named = os.path.abspath(os.fspath(value))
        full = os.path.realpath(named)
    except (OSError, ValueError, TypeError):
        return False
    return any(p == _FORBIDDEN or p.startswith(_FORBIDDEN + os.sep) for p in (named, full))


def _paths(event, args):
    """The paths an event touches: subprocess.Popen's (executable, args, cwd, env) names
    its program in args[0] when executable is None."""
    if event == "subprocess.Popen":
        executable, argv, cwd = args[0], args[1], args[2]
        program = argv if isinstance(argv, (str, bytes, os.PathLike)) else (list(argv) or [None])[0]
        return [executable, program, cwd]
    if args[0] is None and event in ("os.listdir", "os.scandir"):
        return [os.getcwd()]
    return [args[0]]


def _hook(event, args):
    if event not in _EVENTS or not args:
        return
    for path in _paths(event, args):
        if _inside(path):
            with open(_LOG, "a", encoding="utf-8") as log:
                entry = {"pid": os.getpid(), "event": event, "path": str(path)}
                log.write(json.dumps(entry) + "\n")


if _FORBIDDEN and _LOG:
    _FORBIDDEN = os.path.abspath(_FORBIDDEN)
    sys.addaudithook(_hook)
