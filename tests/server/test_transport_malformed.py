"""Malformed messages on the wire: each gets a JSON-RPC error (or, with no id to answer,
is dropped with a log line), no Python traceback ever goes over the wire, and the server
keeps serving. A body cut short by EOF ends the server cleanly."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.raw_wire import SERVER, RawPeer

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
async def peer(tmp_path: Path) -> AsyncIterator[RawPeer]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    started = await RawPeer.start(root, tmp_path / "state")
    try:
        yield started
    finally:
        await started.close()
        # Nothing the client received carries a traceback (the server's stderr log may).
        assert "Traceback" not in json.dumps(started.messages)


def assert_clean_error(reply: dict[str, Any], code: int) -> dict[str, Any]:
    error: dict[str, Any] = reply["error"]
    assert error["code"] == code, reply
    assert "Traceback" not in json.dumps(reply), reply
    return error


async def test_a_header_line_over_64_kib_is_dropped_and_serving_goes_on(peer: RawPeer) -> None:
    await peer.write(b"X-Padding: " + b"a" * (70 * 1024) + b"\r\n")
    await peer.send({"jsonrpc": "2.0", "id": 1, "method": "toolhost/status", "params": {}})
    # The long line broke that message's header: it has no readable id; the next one works.
    await peer.still_serving()
    assert any("header line" in line for line in peer.logged()), peer.logged()


async def test_json_nested_1000_levels_gets_an_error_reply(peer: RawPeer) -> None:
    deep = "[" * 5000 + "]" * 5000
    body = (
        '{"jsonrpc": "2.0", "id": 2, "method": "toolhost/call", '
        f'"params": {{"name": "read_file", "arguments": {{"path": {deep}}}}}}}'
    )
    await peer.send(body.encode())
    error = assert_clean_error(await peer.reply_to(2), -32700)
    assert "nested" in error["message"]
    await peer.still_serving()


async def test_huge_content_length_is_refused_and_the_stream_recovers(peer: RawPeer) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "toolhost/status", "params": {}})
    await peer.write(b"Content-Length: 99999999999999999999\r\n\r\n" + body.encode())
    error = assert_clean_error(await peer.reply_to(3), -32600)
    assert "99999999999999999999" in error["message"]
    await peer.still_serving()


async def test_a_request_without_jsonrpc_gets_invalid_request(peer: RawPeer) -> None:
    await peer.send({"id": 4, "method": "toolhost/status", "params": {}})
    error = assert_clean_error(await peer.reply_to(4), -32600)
    assert '"jsonrpc": "2.0"' in error["message"]
    await peer.still_serving()


async def test_execute_command_with_a_number_is_invalid_params(peer: RawPeer) -> None:
    reply = await peer.request(
        "workspace/executeCommand", {"command": "toolhost.call", "arguments": [5]}
    )
    assert_clean_error(reply, -32602)
    await peer.still_serving()


async def test_unknown_result_ref_is_a_clean_error(peer: RawPeer) -> None:
    reply = await peer.request("toolhost/result", {"resultRef": "r-does-not-exist"})
    error = assert_clean_error(reply, -32602)
    assert error["message"].startswith("result.not_found: ")
    await peer.still_serving()


async def test_a_request_before_initialize_is_refused(tmp_path: Path) -> None:
    # Not through RawPeer.start: that initializes.
    env = {**os.environ, "TOOLHOST_STATE_DIR": str(tmp_path / "state")}
    process = await asyncio.create_subprocess_exec(
        *SERVER,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    peer = RawPeer(process)
    try:
        reply = await peer.request("toolhost/call", {"name": "ls", "arguments": {}})
        error = assert_clean_error(reply, -32002)
        assert error["message"].startswith("server.not_initialized: ")
    finally:
        await peer.close()


async def test_a_body_cut_short_by_eof_exits_cleanly(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    peer = await RawPeer.start(root, tmp_path / "state")
    await peer.write(b'Content-Length: 100\r\n\r\n{"jsonrpc": "2.0", "id"')
    code = await peer.close()
    assert code == 0
    assert b"Traceback" not in peer.stderr, peer.stderr.decode(errors="replace")


@pytest.mark.parametrize("source", ["null device", "file"])
def test_input_that_cannot_be_polled_is_read_to_its_end(tmp_path: Path, source: str) -> None:
    """`toolhost serve < /dev/null` ends at once (it used to wait forever: epoll refuses
    the null device and regular files); from a file, what is in it is read (a body that is
    not JSON: its log line), then the end of input ends the server."""
    requests = tmp_path / "requests"
    requests.write_bytes(b"Content-Length: 9\r\n\r\nnot json!")
    env = {**os.environ, "TOOLHOST_STATE_DIR": str(tmp_path / "state")}
    with (Path(os.devnull) if source == "null device" else requests).open("rb") as stdin:
        done = subprocess.run(
            SERVER, stdin=stdin, capture_output=True, env=env, timeout=60, check=False
        )
    log = done.stderr.decode(errors="replace")
    assert done.returncode == 0, log
    assert ("the body is not valid JSON" in log) == (source == "file"), log


async def test_requests_in_flight_when_the_input_ends_are_answered_once(tmp_path: Path) -> None:
    """`printf ... | toolhost serve`, or an editor that went away: a command still running
    is cancelled and answered, once, before the server exits, with nothing in its log about
    writing to a closed output (its answer used to be lost, with a traceback per write)."""
    root = tmp_path / "ws"
    root.mkdir()
    peer = await RawPeer.start(root, tmp_path / "state")
    call = {"name": "bash", "arguments": {"command": "echo go > started.txt; sleep 60"}}
    await peer.send({"jsonrpc": "2.0", "id": 41, "method": "toolhost/call", "params": call})
    for _ in range(600):  # a generous bound for a busy machine, not a timing assertion
        if (root / "started.txt").exists():
            break
        await asyncio.sleep(0.1)
    assert (root / "started.txt").exists()
    await peer.send({"jsonrpc": "2.0", "id": 42, "method": "toolhost/status", "params": {}})
    assert await peer.close() == 0
    answers = [m for m in peer.messages if m.get("id") == 41 and "method" not in m]
    assert len(answers) == 1, answers
    assert answers[0]["result"]["error"]["code"] == "cancelled", answers
    assert [m.get("id") for m in peer.messages].count(42) == 1
    log = peer.stderr.decode(errors="replace")
    assert "Traceback" not in log and "closed file" not in log, log


# Params that do not fit their method: -32602 naming the method and the field, in the wire's
# names and JSON's types; for a toolhost method, the shape its params take.
CALL_SHAPE = '(expected: {"name": string, "arguments"?: any, "session"?: string'
UNFIT_PARAMS: list[tuple[str, Any, str]] = [
    ("toolhost/call", {"tool": "read_file"}, "required field missing @ params.name"),
    ("toolhost/call", "x", "expected object, got string @ params"),
    ("toolhost/call", [1, 2], "expected object, got array @ params"),
    ("toolhost/call", {"name": 5}, "expected string, got 5 @ params.name"),
    (
        "toolhost/call",
        {"name": "read_file", "arguments": {"path": "a.txt"}, "session": {"x": 1}},
        "expected string, got object @ params.session",
    ),
    ("toolhost/call", None, "expected object, got null @ params"),
    ("toolhost/status", None, "expected object, got null @ params"),
    (
        "textDocument/hover",
        {"textDocument": {"uri": 5}, "position": {"line": "a", "character": 0}},
        "expected integer, got string @ params.position.line",
    ),
    ("textDocument/hover", None, "expected object, got null @ params"),
]


async def test_params_that_do_not_fit_are_refused_field_by_field(peer: RawPeer) -> None:
    for method, params, problem in UNFIT_PARAMS:
        error = assert_clean_error(await peer.request(method, params), -32602)
        message = error["message"]
        assert message.startswith(f"{method}: invalid params: {problem}"), (params, message)
        assert (CALL_SHAPE in message) == (method == "toolhost/call"), message
        assert ("(expected: " in message) == method.startswith("toolhost/"), message
    await peer.still_serving()


async def test_params_left_out_are_a_missing_field(peer: RawPeer) -> None:
    for method in ("toolhost/call", "textDocument/hover"):
        await peer.send({"jsonrpc": "2.0", "id": method, "method": method})
        error = assert_clean_error(await peer.reply_to(method), -32602)
        assert error["message"].startswith(
            f"{method}: invalid params: required field missing @ params"
        )
    await peer.still_serving()


async def test_many_misfits_name_the_first_three_then_count_the_rest(peer: RawPeer) -> None:
    params = {"name": 1, "session": 2, "callId": 3, "batch": 4, "surface": 5, "preApproved": 6}
    message = assert_clean_error(await peer.request("toolhost/call", params), -32602)["message"]
    assert "got 1 @ params.name; " in message and "got 3 @ params.callId; and 3 more" in message
    assert "params.batch" not in message.partition(" (expected: ")[0], message


async def test_execute_command_call_names_the_field(peer: RawPeer) -> None:
    command = {"command": "toolhost.call", "arguments": [{"name": 5}]}
    error = assert_clean_error(await peer.request("workspace/executeCommand", command), -32602)
    assert error["message"].startswith(
        "toolhost.call: invalid params: expected string, got 5 @ params.arguments[0].name "
        + CALL_SHAPE
    ), error
    await peer.still_serving()


# Envelopes that cannot be a request: -32600, answered to the id, or to null when the id
# itself cannot be one (JSON-RPC 2.0, 5.1).
BAD_IDS: list[Any] = [1.5, {"a": 1}, True, None]


async def test_an_id_that_is_not_an_integer_or_string_is_an_invalid_request(
    peer: RawPeer,
) -> None:
    for count, msg_id in enumerate(BAD_IDS, start=1):
        await peer.send({"jsonrpc": "2.0", "id": msg_id, "method": "toolhost/status", "params": {}})
        reply = (await peer.replies_to(None, count))[-1]
        error = assert_clean_error(reply, -32600)
        assert "the id must be an integer or a string" in error["message"], (msg_id, error)
    await peer.still_serving()


async def test_a_request_may_leave_its_params_out(peer: RawPeer) -> None:
    """LSP lets a request leave its params out: a method whose params are all optional
    answers (toolhost/status was refused, "required field missing @ params"); one that
    needs a field names it."""
    await peer.send({"jsonrpc": "2.0", "id": 90, "method": "toolhost/status"})
    assert (await peer.reply_to(90))["result"]["version"]
    await peer.send({"jsonrpc": "2.0", "id": 91, "method": "toolhost/call"})
    error = assert_clean_error(await peer.reply_to(91), -32602)
    assert "required field missing @ params.name" in error["message"], error


async def test_a_method_that_is_not_a_string_is_an_invalid_request(peer: RawPeer) -> None:
    for msg_id, method in ((77, 5), (78, None), (79, ["toolhost/status"])):
        await peer.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": {}})
        error = assert_clean_error(await peer.reply_to(msg_id), -32600)
        assert "the method must be a string" in error["message"], (method, error)
    await peer.still_serving()


# Odd input the server must refuse with a code of its own, never -32603.
DEEP = "[" * 900 + "]" * 900
ODD_BODIES: list[bytes] = [
    b'{"jsonrpc":"2.0","id":201,"method":"toolhost/call","params":' + DEEP.encode() + b"}",
    (
        b'{"jsonrpc":"2.0","id":202,"method":"textDocument/hover","params":{"textDocument":'
        + DEEP.encode()
        + b',"position":{"line":0,"character":0}}}'
    ),
    (
        b'{"jsonrpc":"2.0","id":203,"method":"workspace/executeCommand","params":'
        b'{"command":"toolhost.call","arguments":[' + DEEP.encode() + b"]}}"
    ),
    b'{"jsonrpc":"2.0","id":204,"method":"toolhost/call","params":{"name":"\\ud800"}}',
    b'{"jsonrpc":"2.0","id":205,"method":"toolhost/call","params":{"name":"x","session":"\\udfff"}}',
    b'{"jsonrpc":"2.0","id":206,"method":"\\ud800","params":{}}',
    b'{"jsonrpc":"2.0","id":"\\ud800","method":"toolhost/status","params":[]}',
    b'{"jsonrpc":"2.0","id":207,"method":"toolhost/call","params":{"name":1' + b"0" * 400 + b"}}",
    b'{"jsonrpc":"2.0","id":208,"method":"toolhost/tools","params":{"surface":1e400}}',
    b'{"jsonrpc":"2.0","id":2' + b"0" * 30 + b',"method":"toolhost/status","params":5}',
    b'{"jsonrpc":"2.0","id":209,"method":"toolhost/status","params":null}',
    b'{"jsonrpc":"2.0","id":210,"method":"toolhost/result"}',
    b'{"jsonrpc":"2.0","id":{"a":1},"method":"toolhost/status","params":{}}',
]


async def test_odd_input_is_never_an_internal_error(peer: RawPeer) -> None:
    for body in ODD_BODIES:
        sent = len(peer.messages)
        await peer.send(body)
        await peer.still_serving()
        answers = [m for m in peer.messages[sent:] if "error" in m]
        assert answers, body[:120]
        for answer in answers:
            assert answer["error"]["code"] in (-32600, -32601, -32602), (body[:120], answer)


async def test_refusals_log_one_warning_line_and_no_traceback(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    peer = await RawPeer.start(root, tmp_path / "state")
    try:
        for method, params, _ in UNFIT_PARAMS:
            await peer.request(method, params)
        command = {"command": "toolhost.call", "arguments": [{"name": 5}]}
        await peer.request("workspace/executeCommand", command)
        for msg_id in BAD_IDS:
            await peer.send({"jsonrpc": "2.0", "id": msg_id, "method": "toolhost/status"})
        await peer.send({"jsonrpc": "2.0", "id": 77, "method": 5, "params": {}})
        for body in ODD_BODIES:
            await peer.send(body)
        await peer.still_serving()
    finally:
        await peer.close()
    log = peer.stderr.decode(errors="replace")
    assert "Traceback" not in log, log
    # pygls' own lines for these, each with a traceback, are gone.
    assert "Unable to deserialize" not in log and "Exception occurred" not in log, log
    refused = [line for line in log.splitlines() if " WARNING " in line and "refused" in line]
    assert any(
        "refused 'toolhost/call' (id 1002): toolhost/call: invalid params:" in r for r in refused
    )
    assert any("refused request 1011: toolhost.call: invalid params:" in r for r in refused), log
    assert any("(id 1.5): invalid request: the id must be" in r for r in refused), log
