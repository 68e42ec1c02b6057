"""One guarded HTTP GET: redirects followed by hand and re-checked, body capped, time bounded."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator

import anyio
import attrs
import httpcore
import httpx

from lsp_server.core.errors import (
    TIMEOUT,
    WEB_BLOCKED_ADDRESS,
    WEB_FETCH_FAILED,
    WEB_INVALID_URL,
    ToolError,
)
from lsp_server.web.guard import AddressGuard, BlockedAddress, GuardedBackend

MAX_REDIRECTS = 5
USER_AGENT = "toolhost-web_fetch/0.1 (+https://github.com/toolhost)"
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# Errors of the connection layer; our own transport does not translate them to httpx's.
_TRANSPORT_ERRORS = (
    httpx.HTTPError,
    httpcore.NetworkError,
    httpcore.ProtocolError,
    httpcore.TimeoutException,
    OSError,
)


@attrs.frozen
class FetchedPage:
    url: str
    """The final URL after redirects."""
    status: int
    reason: str
    content_type: str
    charset: str | None
    body: bytes
    truncated: bool
    redirects: tuple[str, ...]


class _CoreStream(httpx.AsyncByteStream):
    def __init__(self, stream: AsyncIterable[bytes]) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream:
            yield chunk

    async def aclose(self) -> None:
        close = getattr(self._stream, "aclose", None)
        if close is not None:
            await close()


class GuardedTransport(httpx.AsyncBaseTransport):
    """httpx over an httpcore pool whose every TCP connection goes through the guard.

    No proxies (a proxy would connect for us, to addresses we never checked)."""

    def __init__(self, guard: AddressGuard) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            max_connections=4,
            network_backend=GuardedBackend(guard),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        response = await self._pool.handle_async_request(core_request)
        assert isinstance(response.stream, AsyncIterable)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_CoreStream(response.stream),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


def parse_url(text: str) -> httpx.URL:
    try:
        url = httpx.URL(text)
    except (httpx.InvalidURL, TypeError) as exc:
        raise ToolError(WEB_INVALID_URL, f"not a valid URL: {exc}", "pass an http(s) URL") from exc
    if url.scheme not in ("http", "https"):
        raise ToolError(
            WEB_INVALID_URL,
            f"the scheme {url.scheme or '(none)'!r} is not fetched",
            "only http:// and https:// URLs are supported",
        )
    if not url.host:
        raise ToolError(WEB_INVALID_URL, "the URL has no host", "pass an absolute http(s) URL")
    return url


def _blocked(exc: BlockedAddress, url: httpx.URL, redirects: list[str]) -> ToolError:
    via = f" (reached by a redirect from {redirects[0]})" if redirects else ""
    return ToolError(
        WEB_BLOCKED_ADDRESS,
        f"refused to fetch {url}{via}: {exc}",
        "web_fetch only reaches public internet addresses; read local files with read_file",
    )


async def _read_capped(response: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        room = max_bytes - size
        if len(chunk) > room:
            parts.append(chunk[:room])
            return b"".join(parts), True
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts), False


async def fetch(
    url_text: str, *, guard: AddressGuard, time_limit: float, max_bytes: int
) -> FetchedPage:
    """GET the URL; every hop's host is checked before the request and at connect time."""
    url = parse_url(url_text)
    redirects: list[str] = []
    transport = GuardedTransport(guard)
    headers = {
        "User-Agent": USER_AGENT,
        "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
        # Uncompressed: the byte cap then bounds memory too (no decompression bombs).
        "Accept-Encoding": "identity",
    }
    async with httpx.AsyncClient(
        transport=transport,
        timeout=time_limit,
        follow_redirects=False,
        trust_env=False,
        headers=headers,
    ) as client:
        try:
            with anyio.fail_after(time_limit):
                for _ in range(MAX_REDIRECTS + 1):
                    # Checked here for a clear message, and again by the transport at connect.
                    default_port = 443 if url.scheme == "https" else 80
                    await guard.resolve(url.host, url.port or default_port)
                    async with client.stream("GET", url) as response:
                        location = response.headers.get("location")
                        if response.status_code in _REDIRECT_STATUSES and location:
                            redirects.append(str(url))
                            url = parse_url(str(response.url.join(location)))
                            continue
                        body, truncated = await _read_capped(response, max_bytes)
                        return FetchedPage(
                            url=str(response.url),
                            status=response.status_code,
                            reason=response.reason_phrase,
                            content_type=response.headers.get("content-type", ""),
                            charset=response.charset_encoding,
                            body=body,
                            truncated=truncated,
                            redirects=tuple(redirects),
                        )
        except BlockedAddress as exc:
            raise _blocked(exc, url, redirects) from exc
        except TimeoutError as exc:
            raise ToolError(
                TIMEOUT,
                f"{url} did not answer within {time_limit:g} s",
                "try again later or another URL",
            ) from exc
        except _TRANSPORT_ERRORS as exc:
            raise ToolError(
                WEB_FETCH_FAILED,
                f"fetching {url} failed: {type(exc).__name__}: {exc}",
                "check the URL and that the host is reachable",
            ) from exc
    raise ToolError(
        WEB_FETCH_FAILED,
        f"more than {MAX_REDIRECTS} redirects, last to {url}",
        "fetch the final URL directly",
    )
