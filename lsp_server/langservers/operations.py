"""The four questions the tools ask, with the readiness rules of codeintel.md.

An answer from a server that is indexing is not the truth (empty, partial, or pointing at
an import instead of the definition): wait (bounded) for its progress to end and ask
again; if it is still busy at the deadline, lsp.not_ready.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from lsp_server.core.uris import uri_to_path
from lsp_server.langservers.child import LanguageServerClient, OpenDocument
from lsp_server.langservers.jsonrpc import Json, ResponseError
from lsp_server.langservers.manager import not_ready

if TYPE_CHECKING:
    from lsp_server.config.tree import LspConfig


@attrs.frozen(order=True)
class Location:
    path: Path | None
    line: int
    """0-based, as LSP counts."""
    character: int
    """In the server's position encoding."""
    uri: str = attrs.field(order=False)


def parse_locations(result: Json) -> list[Location]:
    """Location | Location[] | LocationLink[] | null -> locations (odd items skipped)."""
    items = result if isinstance(result, list) else [result] if isinstance(result, dict) else []
    locations: list[Location] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        uri = item.get("uri", item.get("targetUri"))
        span = item.get("range", item.get("targetSelectionRange", item.get("targetRange")))
        if not isinstance(uri, str) or not isinstance(span, dict):
            continue
        start = span.get("start")
        if not isinstance(start, dict):
            continue
        line, character = start.get("line"), start.get("character")
        if not isinstance(line, int) or not isinstance(character, int):
            continue
        locations.append(Location(uri_to_path(uri), line, character, uri))
    return locations


def text_position(document: OpenDocument, line: int, character: int) -> dict[str, Any]:
    return {
        "textDocument": {"uri": document.uri},
        "position": {"line": line, "character": character},
    }


# Asks per question at most: a server whose every answer comes with progress of its own
# (begun and ended within the request) is not indexing; its last answer stands.
MAX_ASKS = 3


async def _ask_when_ready(
    client: LanguageServerClient, method: str, params: Json, config: LspConfig
) -> Json:
    """Ask once no indexing runs; an answer given while indexing began or ran is asked
    again after it ends (it may be partial: tsserver answers with the import alias while
    its project loads); still indexing at the deadline -> lsp.not_ready."""
    deadline = time.monotonic() + config.ready_timeout_seconds
    for attempt in range(MAX_ASKS):
        last = attempt == MAX_ASKS - 1
        if not await client.wait_until_idle(max(0.0, deadline - time.monotonic())):
            raise not_ready(client)
        epoch = client.progress_epoch
        try:
            result = await client.request(method, params, config.request_timeout_seconds)
        except ResponseError:
            if last or (client.progress_epoch == epoch and not client.busy):
                raise
            continue
        if not client.busy and (client.progress_epoch == epoch or last):
            return result
        if time.monotonic() >= deadline:
            break
    raise not_ready(client)


async def definition(
    client: LanguageServerClient,
    document: OpenDocument,
    line: int,
    character: int,
    config: LspConfig,
) -> list[Location]:
    params = text_position(document, line, character)
    result = await _ask_when_ready(client, "textDocument/definition", params, config)
    return parse_locations(result)


async def references(
    client: LanguageServerClient,
    document: OpenDocument,
    line: int,
    character: int,
    include_declaration: bool,
    config: LspConfig,
) -> list[Location]:
    params = text_position(document, line, character)
    params["context"] = {"includeDeclaration": include_declaration}
    result = await _ask_when_ready(client, "textDocument/references", params, config)
    return parse_locations(result)


async def hover(
    client: LanguageServerClient,
    document: OpenDocument,
    line: int,
    character: int,
    config: LspConfig,
) -> str:
    params = text_position(document, line, character)
    result = await _ask_when_ready(client, "textDocument/hover", params, config)
    return hover_text(result)


def hover_text(result: Json) -> str:
    """MarkupContent | MarkedString | MarkedString[] -> plain text (code blocks kept)."""
    if not isinstance(result, dict):
        return ""
    return _marked(result.get("contents")).strip()


def _marked(contents: Json) -> str:
    if isinstance(contents, str):
        return contents
    if isinstance(contents, list):
        return "\n\n".join(part for part in (_marked(c).strip() for c in contents) if part)
    if isinstance(contents, dict):
        value = contents.get("value")
        if not isinstance(value, str):
            return ""
        language = contents.get("language")
        if isinstance(language, str) and "kind" not in contents:
            return f"```{language}\n{value}\n```"
        return value
    return ""


async def diagnostics(
    client: LanguageServerClient, document: OpenDocument, config: LspConfig
) -> list[Json]:
    """Diagnostics for the document's current version (pull, else push + settle)."""
    await client.wait_until_idle(config.ready_timeout_seconds)
    found = await client.diagnostics(
        document, config.ready_timeout_seconds, config.diagnostics_settle_seconds
    )
    if found is None:
        raise not_ready(client)
    return found
