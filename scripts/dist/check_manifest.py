"""Is the VS Code extension's manifest one the Marketplace (`vsce publish`) and Open VSX
(`ovsx publish`) accept? Both registries are out of reach here, so this checks what they
check on upload that a manifest alone decides, and that it names the release's version.

    python scripts/dist/check_manifest.py [PACKAGE_JSON] [--version V]

Prints one line per problem and exits 1, or prints "manifest ok: PUBLISHER.NAME V" and exits
0. `./run dist` (scripts/dist/build.sh) runs it before packaging.
"""

from __future__ import annotations

import argparse
import json
import re
import struct
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# vsce's own rule for publisher and extension names (validation.js, nameRegex); Open VSX's
# namespaces and names follow the same.
ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
SEMVER = re.compile(r"^\d+\.\d+\.\d+$")  # the Marketplace takes no pre-release suffix
# The Marketplace's categories (code.visualstudio.com/api/references/extension-manifest).
CATEGORIES = {
    "AI", "Azure", "Chat", "Data Science", "Debuggers", "Education", "Extension Packs",
    "Formatters", "Keymaps", "Language Packs", "Linters", "Machine Learning", "Notebooks",
    "Other", "Programming Languages", "SCM Providers", "Snippets", "Testing", "Themes",
    "Visualization",
}  # fmt: skip


def problems(manifest: dict[str, object], folder: Path, version: str) -> list[str]:
    found = []
    for key in ("publisher", "name"):
        value = manifest.get(key)
        if not isinstance(value, str) or not ID.match(value):
            found.append(f"{key} {value!r}: lower-case letters, digits and '-' only")
    if not isinstance(manifest.get("displayName"), str) or not manifest["displayName"]:
        found.append("displayName is missing: the registries show it as the title")
    if not isinstance(manifest.get("description"), str) or not manifest["description"]:
        found.append("description is missing")
    if manifest.get("version") != version or not SEMVER.match(str(manifest.get("version"))):
        found.append(f"version {manifest.get('version')!r} is not the release's {version}")
    engines = manifest.get("engines")
    if not isinstance(engines, dict) or not str(engines.get("vscode", "")).startswith("^"):
        found.append('engines.vscode is missing (e.g. "^1.95.0")')
    if not manifest.get("license") or not (folder / "LICENSE").is_file():
        found.append("license and a LICENSE file are required (Open VSX refuses without)")
    repository = manifest.get("repository")
    url = repository.get("url") if isinstance(repository, dict) else repository
    if not isinstance(url, str) or not url.startswith("https://"):
        found.append(f"repository {url!r}: an https URL (vsce warns and links break without)")
    categories = manifest.get("categories")
    if not isinstance(categories, list) or not categories:
        found.append("categories is missing")
    else:
        found += [f"category {c!r} is not one of the Marketplace's" for c in categories
                  if c not in CATEGORIES]  # fmt: skip
    icon = manifest.get("icon")
    if icon is not None:
        found += icon_problems(folder / str(icon))
    return found


def icon_problems(path: Path) -> list[str]:
    """The Marketplace takes a PNG icon of at least 128x128 (no SVG)."""
    if not path.is_file():
        return [f"icon {path.name} is not in the package"]
    head = path.read_bytes()[:24]
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return [f"icon {path.name} is not a PNG"]
    width, height = struct.unpack(">II", head[16:24])
    return [] if min(width, height) >= 128 else [f"icon {path.name} is {width}x{height}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", nargs="?", type=Path,
                        default=ROOT / "extension" / "vscode" / "package.json")  # fmt: skip
    parser.add_argument("--version", help="the release's version (default: pyproject's)")
    args = parser.parse_args()
    version = (
        args.version or tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    )
    manifest = json.loads(args.package.read_text(encoding="utf-8"))
    found = problems(manifest, args.package.parent, version)
    for problem in found:
        print(f"manifest: {problem}", file=sys.stderr)
    if found:
        return 1
    print(f"manifest ok: {manifest['publisher']}.{manifest['name']} {manifest['version']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
