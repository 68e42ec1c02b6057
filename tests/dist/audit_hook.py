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
        full = os.path.realpath(os.fspath(value))
    except (OSError, ValueError):
        return False
    return full == _FORBIDDEN or full.startswith(_FORBIDDEN + os.sep)


def _hook(event, args):
    if event not in _EVENTS or not args:
        return
    first = args[0]
    if first is None and event in ("os.listdir", "os.scandir"):
        first = os.getcwd()
    if _inside(first):
        with open(_LOG, "a", encoding="utf-8") as log:
            log.write(json.dumps({"pid": os.getpid(), "event": event, "path": str(first)}) + "\n")


if _FORBIDDEN and _LOG:
    _FORBIDDEN = os.path.realpath(_FORBIDDEN)
    sys.addaudithook(_hook)
