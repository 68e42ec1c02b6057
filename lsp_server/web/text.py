"""A fetched body as text a model can read: HTML through markdownify, text decoded."""

from __future__ import annotations

import codecs
import re
from typing import TYPE_CHECKING
from urllib.parse import urljoin

import charset_normalizer
from bs4 import BeautifulSoup
from markdownify import MarkdownConverter

if TYPE_CHECKING:
    from lsp_server.web.fetch import FetchedPage

_HTML_TYPES = ("text/html", "application/xhtml+xml")
_TEXT_TYPES = (
    "application/json",
    "application/xml",
    "application/javascript",
    "application/ecmascript",
    "application/x-yaml",
    "application/yaml",
    "application/toml",
)
# Elements whose content is never readable text.
_DROPPED = ("script", "style", "noscript", "template", "svg", "canvas", "iframe", "object")
_BLANK_RUNS = re.compile(r"\n[ \t]*(?:\n[ \t]*){2,}")
_META_CHARSET = re.compile(rb"""<meta[^>]+charset=["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


def media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def classify(content_type: str, body: bytes) -> str:
    """ "html", "text" or "binary"."""
    kind = media_type(content_type)
    if kind in _HTML_TYPES:
        return "html"
    if kind.startswith("text/") or kind in _TEXT_TYPES or kind.endswith(("+json", "+xml")):
        return "text"
    if kind and kind != "application/octet-stream":
        return "binary"
    head = body[:1024].lstrip().lower()
    if head.startswith((b"<!doctype html", b"<html")):
        return "html"
    return "binary" if b"\0" in body[:8192] else "text"


def _known_codec(name: str | None) -> str | None:
    if not name:
        return None
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def decode(body: bytes, charset: str | None, *, html: bool) -> str:
    """Header charset, then <meta charset>, then detection, then UTF-8 with replacement."""
    encoding = _known_codec(charset)
    if encoding is None and html:
        found = _META_CHARSET.search(body[:4096])
        encoding = _known_codec(found.group(1).decode("ascii")) if found else None
    if encoding is None:
        best = charset_normalizer.from_bytes(body[:65536]).best()
        encoding = _known_codec(best.encoding) if best is not None else None
    return body.decode(encoding or "utf-8", errors="replace")


def html_to_text(html: str, base_url: str = "") -> str:
    """Readable Markdown-like text: headings, lists, links and tables kept, scripts dropped.

    Relative links are made absolute against `base_url` so the model can fetch them."""
    soup = BeautifulSoup(html, "html.parser")
    for name in _DROPPED:
        for element in soup.find_all(name):
            element.decompose()
    if base_url:
        for link in soup.find_all("a", href=True):
            link["href"] = urljoin(base_url, str(link["href"]))
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    if soup.head is not None:
        soup.head.decompose()
    converter = MarkdownConverter(heading_style="ATX", bullets="-", strip=["img"])
    text = str(converter.convert_soup(soup))
    text = _BLANK_RUNS.sub("\n\n", text).strip()
    return f"# {title}\n\n{text}" if title and not text.startswith("#") else text


def render_page(page: FetchedPage) -> str:
    """The tool's result text: a header (status, redirects, size) and the readable body."""
    kind = classify(page.content_type, page.body)
    header = [f"GET {page.url} -> {page.status} {page.reason}".rstrip()]
    if page.redirects:
        header.append("redirected from: " + " -> ".join(page.redirects))
    shown_type = media_type(page.content_type) or "unknown type"
    size = len(page.body)
    size_note = f"first {size} bytes, truncated" if page.truncated else f"{size} bytes"
    header.append(f"content: {shown_type}, {size_note}")
    if kind == "binary":
        body = f"[binary content ({shown_type}) not shown: web_fetch returns text only]"
    else:
        text = decode(page.body, page.charset, html=kind == "html")
        body = html_to_text(text, page.url) if kind == "html" else text
        if not body.strip():
            body = "(the page has no readable text)"
    if page.truncated:
        body += f"\n[body truncated at {len(page.body)} bytes: the page is larger]"
    return "\n".join(header) + "\n\n" + body
