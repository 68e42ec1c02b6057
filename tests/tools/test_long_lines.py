"""A line cut by the bounds still shows its head and its tail, and says how many of its
chars were left out and exactly where to page them (issue 17, 9d): bash in the foreground
and in the background, read_file (minified JS), grep, web_fetch and the MCP face."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from lsp_server.runtime.results.bounding import bound_text
from lsp_server.search.query import cut_line
from tests.helpers import fixed_page, loopback_http, lsp_call, lsp_session, text_of
from tests.mcp.clients import mcp_session
from tests.mcp.clients import text_of as mcp_text

pytestmark = pytest.mark.timeout(180)

BYPASS = {"policy": {"mode": "bypass"}}
# A minified bundle: one 3 MB line between two short ones, distinct head and tail.
MINIFIED = "/*! head */\n" + "".join(f"v{i}=1;" for i in range(400_000)) + "END;\n// tail\n"
PAGING = re.compile(r'"result_ref": "(?P<ref>[^"]+)", "offset": (?P<offset>\d+)')


async def page(client: LanguageClient, ref: str, offset: int, limit: int = 200) -> str:
    answer = await client.protocol.send_request_async(
        "toolhost/result", {"resultRef": ref, "offset": offset, "limit": limit}
    )
    text: str = answer["text"]
    return text


def test_one_enormous_line_keeps_head_and_tail_and_says_where_the_rest_is() -> None:
    text = "H" * 50 + "x" * 1_000_000 + "T" * 50
    bounded = bound_text(text, 10_000, "r-s-1")
    assert bounded.text.startswith("H" * 50 + "x" * 100)
    assert bounded.text.endswith("x" * 100 + "T" * 50)
    left_out = len(text) - len(bounded.text.replace(_marker(bounded.text), ""))
    assert f"[... line 1 cut: {left_out} of its {len(text)} chars left out here" in bounded.text
    assert bounded.omitted_offset == bounded.text.index(" [...")
    assert f"result_ref r-s-1; from offset {bounded.omitted_offset} (paging call" in bounded.text


def test_a_cut_between_lines_names_the_partial_lines() -> None:
    text = "short\n" + "a" * 40_000 + "\n" + "b" * 40_000 + "\nend\n"
    bounded = bound_text(text, 10_000)
    assert bounded.text.startswith("short\naaaa") and bounded.text.endswith("bbbb\nend\n")
    assert "chars omitted: the rest of line 2, 0 whole lines, and the start of line 3" in (
        bounded.text
    )


def _marker(text: str) -> str:
    found = re.search(r" \[\.\.\. .*? \.\.\.\] ", text)
    assert found, text[:300]
    return found.group(0)


def test_grep_shows_the_match_inside_a_long_line() -> None:
    line = "a" * 5000 + "needle" + "b" * 5000
    shown = cut_line(line, 7, line.index("needle"))
    assert shown.startswith("a" * 200) and shown.endswith("b" * 150)
    assert "a" * 50 + "needle" in shown
    assert "chars left out: read_file offset=6 limit=1 shows the line" in shown
    assert len(shown) < 800


@pytest.mark.slow
async def test_bash_200_mb_on_one_line_shows_head_and_tail(tmp_path: Path) -> None:
    command = "printf HEAD; head -c 200000000 /dev/zero | tr '\\0' a; printf TAIL"
    async with lsp_session(tmp_path, BYPASS) as client:
        result = await lsp_call(client, "bash", {"command": command})
        text = text_of(result)
        ref = result["meta"]["resultRef"]
        assert text.startswith("HEAD" + "a" * 5000)
        assert "a" * 5000 + "TAIL\n[exit code 0]" in text
        assert re.search(r" \[\.\.\. line 1 cut: \d+ of its \d+ chars left out here; ", text)
        found = PAGING.search(text)
        assert found and found["ref"] == ref
        rest = await page(client, ref, int(found["offset"]))
    assert rest == "a" * 200


async def test_background_job_output_on_one_line(tmp_path: Path) -> None:
    command = "printf HEAD; head -c 2000000 /dev/zero | tr '\\0' a; printf TAIL"
    async with lsp_session(tmp_path, BYPASS) as client:
        started = text_of(
            await lsp_call(client, "bash", {"command": command, "run_in_background": True})
        )
        job_id = re.search(r'Started background job "([^"]+)"', started)
        assert job_id, started
        text = await _job_text(client, job_id.group(1))
    assert text.startswith("HEAD" + "a" * 5000)
    assert "a" * 5000 + "TAIL" in text
    assert "line 1 cut:" in text


async def _job_text(client: LanguageClient, job_id: str) -> str:
    result = await lsp_call(client, "job_output", {"job_id": job_id, "wait": True})
    assert not result["isError"], text_of(result)
    return text_of(result)


async def test_read_file_of_minified_js_pages_the_cut_line(tmp_path: Path) -> None:
    (tmp_path / "bundle.min.js").write_text(MINIFIED)
    async with lsp_session(tmp_path, BYPASS) as client:
        result = await lsp_call(client, "read_file", {"path": "bundle.min.js"})
        text = text_of(result)
        rows = text.splitlines()
        assert rows[0].endswith("1→/*! head */") and rows[2].endswith("3→// tail")
        assert "2→v0=1;v1=1;" in rows[1] and rows[1].endswith("v399999=1;END;")
        found = re.search(
            r"\[\.\.\. (\d+) chars of this line left out; result_ref (\S+); from "
            r"offset (\d+) \.\.\.\]",
            rows[1],
        )
        assert found, rows[1][:2000]
        assert f'"result_ref": "{found[2]}", "offset": {found[3]}}}}}' in text  # the one cut line
        rest = await page(client, found[2], int(found[3]), 20_000)
    head = rows[1].split("→", 1)[1].split(" [...")[0]
    line = MINIFIED.splitlines()[1]
    assert rest.startswith(line[len(head) : len(head) + 1000])
    assert int(found[1]) == len(line) - 2000


@pytest.mark.slow
async def test_grep_over_the_wire_shows_the_match_in_a_minified_line(tmp_path: Path) -> None:
    (tmp_path / "bundle.min.js").write_text(MINIFIED)
    async with lsp_session(tmp_path, BYPASS) as client:
        text = text_of(await lsp_call(client, "grep", {"pattern": "v200000="}))
    row = text.splitlines()[0]
    assert row.startswith("bundle.min.js:2:v0=1;") and row.endswith("v399999=1;END;")
    assert "v199999=1;v200000=1;" in row
    assert "chars of this line left out: read_file offset=1 limit=1 shows the line" in row


@pytest.fixture
def one_line_site() -> Iterator[str]:
    body = ("HEAD" + "x" * 900_000 + "TAIL").encode()
    with loopback_http(fixed_page(body, "text/plain")) as url:
        yield f"{url}/big.txt"


@pytest.mark.slow
async def test_web_fetch_of_one_line_shows_head_and_tail(
    tmp_path: Path, one_line_site: str
) -> None:
    options = {**BYPASS, "web": {"allowLoopback": True}}
    async with lsp_session(tmp_path, options) as client:
        text = text_of(await lsp_call(client, "web_fetch", {"url": one_line_site}))
    assert "HEAD" + "x" * 1000 in text and "x" * 1000 + "TAIL" in text
    assert re.search(r"\[\.\.\. line \d+ cut: \d+ of its \d+ chars left out here; ", text)


async def test_mcp_text_of_a_cut_line_has_head_tail_and_paging(tmp_path: Path) -> None:
    (tmp_path / "bundle.min.js").write_text(MINIFIED)
    async with mcp_session(tmp_path, "--attach", "never") as session:
        result = await session.call_tool("read_file", {"path": "bundle.min.js"})
    text = mcp_text(result)
    assert "2→v0=1;v1=1;" in text and "v399999=1;END;\n" in text
    assert re.search(r"chars of this line left out; result_ref \S+; from offset \d+", text)
    assert re.search(r'"offset": \d+\}\}\]', text)


async def test_each_cut_line_names_its_own_offset(tmp_path: Path) -> None:
    from tests.helpers import call_tool, make_runtime

    (tmp_path / "two.js").write_text("é" * 3000 + "A" * 10 + "\nshort\n" + "B" * 2500 + "\n")
    runtime = make_runtime(tmp_path)
    text = text_of(await call_tool(runtime, "read_file", {"path": "two.js"}))
    found = re.findall(r"result_ref (\S+); from offset (\d+)", text)
    assert len(found) == 2 and '"offset": <the offset in the marker>' in text
    session = runtime.sessions.get("default")
    first, second = (session.results.page(ref, int(at), 8).text for ref, at in found)
    assert (first, second) == ("é" * 4, "B" * 8)  # 8 bytes: four 2-byte chars
