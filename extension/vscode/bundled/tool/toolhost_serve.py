"""Starts the toolhost server this VS Code package carries (bundled/libs), with whatever
Python >= 3.11 started it: `python -I toolhost_serve.py serve`.

Dependencies built for one CPython version live once more per version in bundled/abi/cpXY,
which goes before bundled/libs on sys.path. An interpreter the package has no build for
exits with code 3 and one line on stderr that names the fix (the extension shows it).
"""

import json
import os
import sys

BUNDLED = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MINIMUM = (3, 11)
EXIT_UNSUPPORTED = 3


def fail(message):
    sys.stderr.write("toolhost-bundle: " + message + "\n")
    sys.exit(EXIT_UNSUPPORTED)


def main():
    with open(os.path.join(BUNDLED, "bundle.json"), encoding="utf-8") as handle:
        record = json.load(handle)
    running = "%d.%d" % sys.version_info[:2]
    supported = [record["python"], *record["abi"]]
    fix = (
        "install Python %s (or select one in the Python extension), or set "
        "toolhost.server.python to an interpreter with toolhost installed"
    ) % " / ".join(supported)
    if sys.version_info[:2] < MINIMUM:
        fail("%s is Python %s; the bundled server needs Python >= 3.11: %s" % (sys.executable, running, fix))
    paths = [os.path.join(BUNDLED, "libs")]
    if running != record["python"]:
        abi = os.path.join(BUNDLED, "abi", "cp" + running.replace(".", ""))
        if running not in record["abi"] or not os.path.isdir(abi):
            fail("this package carries no build for Python %s: %s" % (running, fix))
        paths.insert(0, abi)
    sys.path[:0] = paths
    from lsp_server.cli import main as toolhost

    sys.argv = ["toolhost", *sys.argv[1:]]
    return toolhost()


if __name__ == "__main__":
    sys.exit(main())
