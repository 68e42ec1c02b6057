"""The wheels a release build and the install tests need, downloaded once (the only step
that uses the network), so that `./run dist` and tests/dist install with `--no-index`.

    python scripts/dist/wheelhouse.py WHEELHOUSE

Downloads into WHEELHOUSE:
  - toolhost's runtime dependencies (from pyproject.toml), as wheels any patch release of
    this machine's Python X.Y takes;
  - the build backend (setuptools, wheel) and `build`, for an offline `python -m build`,
    and pip itself, which `pipx install` upgrades in its shared environment first;
  - for each other Python the VS Code bundle serves (ABI_PYTHONS), the wheels of the
    dependencies that are built for one CPython version (cp311-cp311, not abi3): the
    bundle carries those once per version (see bundle_vscode.py).
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD_TOOLS = ["build>=1.2", "setuptools>=77", "wheel", "pip"]
# The Pythons the VS Code package runs on besides the one that builds it.
ABI_PYTHONS = ["3.11", "3.12", "3.13", "3.14"]
PLATFORMS = {
    "linux-x64": [
        "manylinux_2_34_x86_64",
        "manylinux_2_31_x86_64",
        "manylinux_2_28_x86_64",
        "manylinux_2_27_x86_64",
        "manylinux_2_17_x86_64",
        "manylinux2014_x86_64",
        "manylinux_2_5_x86_64",
        "manylinux1_x86_64",
        "linux_x86_64",
    ],
    "linux-arm64": [
        "manylinux_2_28_aarch64",
        "manylinux_2_17_aarch64",
        "manylinux2014_aarch64",
    ],
    "darwin-arm64": ["macosx_11_0_arm64", "macosx_12_0_arm64", "macosx_14_0_arm64"],
    "darwin-x64": ["macosx_10_9_x86_64", "macosx_10_12_x86_64", "macosx_10_13_x86_64"],
    "win32-x64": ["win_amd64"],
}


def runtime_requirements() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return list(project["dependencies"])


def pip(*args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", *args, "--quiet", "--disable-pip-version-check"],
        check=True,
    )


def version_specific(wheelhouse: Path) -> list[str]:
    """name==version of every wheel built for one CPython (cpXY-cpXY), from their names."""
    found = set()
    for wheel in wheelhouse.glob("*.whl"):
        name, version, *_rest, python, abi, _platform = wheel.stem.split("-")
        if abi.startswith("cp") and abi == python:
            found.add(f"{name}=={version}")
    return sorted(found)


def abi_pip_args(python: str, target: str) -> list[str]:
    """pip's flags that pick the wheels of one CPython version ("3.12", or "3.11.7": a
    bare "3.11" means 3.11.0 to requires-python) and one VS Code target."""
    tag = "cp" + "".join(python.split(".")[:2])
    platforms = [arg for p in PLATFORMS[target] for arg in ("--platform", p)]
    return [
        "--only-binary=:all:",
        "--implementation",
        "cp",
        "--python-version",
        python,
        "--abi",
        tag,
        "--abi",
        "abi3",
        "--abi",
        "none",
        *platforms,
    ]


def main() -> int:
    wheelhouse = Path(sys.argv[1]).resolve()
    wheelhouse.mkdir(parents=True, exist_ok=True)
    # Versions any 3.X.0 takes (Debian's 3.11.2 refuses soupsieve 4.1, which wants 3.11.5).
    base = f"{sys.version_info.major}.{sys.version_info.minor}"
    pip("download", "--dest", str(wheelhouse), *abi_pip_args(base, "linux-x64"),
        *runtime_requirements())  # fmt: skip
    pip("download", "--dest", str(wheelhouse), *BUILD_TOOLS)
    pinned = version_specific(wheelhouse)
    for python in ABI_PYTHONS:
        pip(
            "download",
            "--dest",
            str(wheelhouse),
            "--no-deps",
            *abi_pip_args(python, "linux-x64"),
            *pinned,
        )
    print(f"wheelhouse: {len(list(wheelhouse.glob('*.whl')))} wheels in {wheelhouse}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
