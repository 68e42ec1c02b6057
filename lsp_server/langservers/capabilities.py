"""What toolhost, as the client of a child language server, declares in initialize."""

from __future__ import annotations

from typing import Any


def client_capabilities() -> dict[str, Any]:
    """Only what this client really does (servers adapt their answers to it)."""
    return {
        "general": {"positionEncodings": ["utf-16", "utf-8"]},
        "window": {"workDoneProgress": True, "showMessage": {}},
        "workspace": {
            "configuration": True,
            "workspaceFolders": True,
            "didChangeConfiguration": {"dynamicRegistration": False},
            "diagnostics": {"refreshSupport": True},
        },
        "textDocument": {
            "synchronization": {"dynamicRegistration": False, "didSave": False},
            "definition": {"dynamicRegistration": False, "linkSupport": True},
            "references": {"dynamicRegistration": False},
            "hover": {"dynamicRegistration": False, "contentFormat": ["markdown", "plaintext"]},
            "publishDiagnostics": {"relatedInformation": False, "versionSupport": True},
            "diagnostic": {"dynamicRegistration": True, "relatedDocumentSupport": False},
        },
    }
