"""Tools other than the shell, in-process: web_fetch, an error's text, a timed-out
command's partial output and a stored result all show secrets as placeholders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import as_json, call_tool, fixed_page, loopback_http, make_runtime, text_of
from tests.secrets.probes import FAKE_API_KEY, SERVER_ENV, leaked, make_workspace

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, value in SERVER_ENV.items():
        monkeypatch.setenv(name, value)
    folder = tmp_path / "ws"
    make_workspace(folder)
    return folder


async def test_web_fetch_shows_a_placeholder(root: Path) -> None:
    runtime = make_runtime(root, {"web": {"allow_loopback": True}})
    page = f"<html><body><p>leaked key: {FAKE_API_KEY}</p></body></html>".encode()
    with loopback_http(fixed_page(page, "text/html")) as url:
        result = await call_tool(runtime, "web_fetch", {"url": url + "/page"})
    assert "‹secret:FAKE_API_KEY›" in text_of(result), text_of(result)
    assert not leaked(json.dumps(as_json(result), ensure_ascii=False))


@pytest.mark.slow
async def test_errors_timeouts_and_stored_results_show_placeholders(root: Path) -> None:
    runtime = make_runtime(root, {"limits": {"max_output_chars": 2000}})
    # The closest region an unmatched edit shows holds the value.
    await call_tool(runtime, "read_file", {"path": "config.py"})
    missed = await call_tool(
        runtime,
        "edit_file",
        {"path": "config.py", "old_string": f"API_KEY = '{FAKE_API_KEY[:-1]}X'", "new_string": "x"},
    )
    assert "file has 'API_KEY·=·'‹secret:FAKE_API_KEY›''" in text_of(missed)
    timed_out = await call_tool(
        runtime, "bash", {"command": "cat config.py; sleep 30", "timeout_ms": 1000}
    )
    assert timed_out.error is not None and timed_out.error.code == "timeout"
    big = await call_tool(
        runtime, "bash", {"command": "for i in $(seq 1 400); do cat config.py; done"}
    )
    ref = big.meta.result_ref
    assert ref is not None
    stored = runtime.sessions.get("default").results
    full = next(item for item in stored.items() if item.ref == ref).read().decode()
    assert full.count("‹secret:FAKE_API_KEY›") == 400
    for result in (missed, timed_out, big):
        assert not leaked(json.dumps(as_json(result), ensure_ascii=False)), as_json(result)
    assert "‹secret:FAKE_API_KEY›" in text_of(timed_out)
