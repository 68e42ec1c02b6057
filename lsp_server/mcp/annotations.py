"""MCP tool annotations, derived from the contract entry (never a list kept per tool)."""

from __future__ import annotations

from lsp_server.runtime.contract import ContractEntry


def annotations_for(entry: ContractEntry) -> dict[str, bool]:
    """readOnlyHint, destructiveHint, idempotentHint and openWorldHint of one tool.

    Derived from the entry's own flags: a shell command reaches anything (open world,
    destructive); a writer that creates or deletes whole files or ranges can lose data; a
    tool that takes a URL reads the open web; only read-only tools are idempotent."""
    shell = entry.kind == "shell"
    creates = any(arg.access == "write" and not arg.must_exist for arg in entry.path_args)
    deletes = entry.name.startswith("delete_")
    takes_url = "url" in entry.schema.get("properties", {})
    return {
        "readOnlyHint": entry.read_only,
        "destructiveHint": not entry.read_only and (shell or creates or deletes),
        "idempotentHint": entry.read_only,
        "openWorldHint": shell or takes_url,
    }
