"""Malformed JSON-RPC envelopes for every wire's fuzz test (LSP, MCP stdio, MCP HTTP, ACP):
lone surrogates in ids, methods, keys and values, odd ids (floats, objects, arrays, booleans,
null), integer ids past 64 bits, a 1 MB string id, huge values, deep nesting, broken JSON and bytes
that are not UTF-8. Seeded, so that a failure reproduces.

Each envelope says which id the server must answer: `answer_id` for a request whose id is
a string or an integer (the reply carries that very id), `odd_id` for a request whose id
JSON-RPC does not allow (the reply, if any, carries id null or the id given back: the test
counts that the server lives on), and neither for a notification, a response or a line
nobody can read (dropped, logged).
"""

from __future__ import annotations

import json
import random
from typing import Any

import attrs

from lsp_server.wire import broken_json

SURROGATES = ["\ud800", "\udfff", "\udc80", "a\ud83dz", "\udcff\udcfe"]
ODD_IDS: list[Any] = [1.5, -0.0, 1e300, {}, {"a": 1}, [], [1], True, False]


@attrs.frozen
class Envelope:
    line: bytes
    answer_id: Any = None
    """The id its reply must carry (None: no reply is owed at a known id)."""
    odd_id: bool = False
    """A request whose id JSON-RPC does not allow (answered at id null, or dropped)."""


def dumps(message: Any) -> bytes:
    """JSON text as a careless client writes it: lone surrogates as `\\ud800` escapes."""
    return json.dumps(message, ensure_ascii=True).encode("ascii")


def _odd_string(rng: random.Random) -> str:
    parts = [rng.choice(SURROGATES), "x", "\x00", "é", "\u2028", "𝄞", '"', "\\"]
    return "".join(rng.choice(parts) for _ in range(rng.randrange(1, 6)))


def _value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.choice([0, -1, 2**63, 2**64 + 1, -(2**80), 10**30])
    if kind == 3:
        return rng.choice([0.5, -1e-320, 1e308, 3.14159])
    if kind == 4:
        return _odd_string(rng)
    if kind == 5:
        return rng.choice(["", "ok", "x" * rng.choice([10, 70_000])])
    if kind == 6:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {_odd_string(rng): _value(rng, depth + 1) for _ in range(rng.randrange(4))}


def envelopes(methods: list[str], count: int = 640, seed: int = 41) -> list[Envelope]:
    """`count` malformed lines aimed at `methods` (each wire's harmless ones: none that ends
    the session, such as LSP's shutdown and exit). Ids are unique strings and integers."""
    rng = random.Random(seed)
    out: list[Envelope] = []
    for number in range(count):
        kind = number % 16
        method: Any = rng.choice(methods)
        if rng.random() < 0.2:
            method = method + rng.choice(SURROGATES)
        params = _value(rng)
        if kind in (0, 1, 2, 3):  # a usable id; odd method, params
            request_id: Any = rng.choice([f"s{number}", number + 10_000, 2**70 + number])
            if kind == 1:
                request_id = f"{rng.choice(SURROGATES)}{number}"
            if kind == 2:
                params = {_odd_string(rng): _value(rng), "name": _odd_string(rng)}
            message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            out.append(Envelope(dumps(message), answer_id=request_id))
        elif kind == 4:  # a 1 MB string id, or one only surrogates
            request_id = rng.choice([f"big{number}" + "i" * 1_000_000, SURROGATES[number % 5]])
            request_id += str(number)
            message = {"jsonrpc": "2.0", "id": request_id, "method": method}
            out.append(Envelope(dumps(message), answer_id=request_id))
        elif kind == 5:  # an id JSON-RPC does not allow
            odd = ODD_IDS[(number // 16) % len(ODD_IDS)]
            message = {"jsonrpc": "2.0", "id": odd, "method": method, "params": params}
            out.append(Envelope(dumps(message), odd_id=True))
        elif kind == 6:  # id null: a notification to JSON-RPC 1.0, a request to some
            message = {"jsonrpc": "2.0", "id": None, "method": method, "params": params}
            out.append(Envelope(dumps(message), odd_id=True))
        elif kind == 7:  # a notification with odd params
            out.append(Envelope(dumps({"jsonrpc": "2.0", "method": method, "params": params})))
        elif kind == 8:  # deep nesting in params, with a usable id before it
            depth = rng.choice([200, 5_000, 200_000])
            request_id = f"deep{number}"
            head = f'{{"jsonrpc":"2.0","id":"{request_id}","method":{json.dumps(method)},'
            line = (head + '"params":{"v":' + "[" * depth + "]" * depth + "}}").encode()
            out.append(Envelope(line, answer_id=request_id))
        elif kind == 9:  # a huge value
            request_id = number + 20_000
            value = rng.choice(["z" * 3_000_000, [0] * 300_000, {str(i): i for i in range(50_000)}])
            message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {"v": value}}
            out.append(Envelope(dumps(message), answer_id=request_id))
        elif kind == 10:  # broken JSON: answered when its head shows an id
            request_id = f"broken{number}"
            body = rng.choice(
                [
                    f'{{"jsonrpc":"2.0","id":"{request_id}","method":"x",',
                    f'{{"jsonrpc":"2.0","id":"{request_id}","method":"x"}}}}',
                    f'{{"jsonrpc":"2.0","id":"{request_id}","params":[1,,2]}}',
                    '{"jsonrpc":"2.0","method":"x","params":{"a":1,}}',
                    "[" * 50,
                    '"\\ud800"',
                ]
            ).encode()
            out.append(Envelope(body, answer_id=broken_json.request_id(body)))
        elif kind == 11:  # not UTF-8: raw surrogate bytes, a stray continuation byte
            request_id = f"bytes{number}"
            junk = rng.choice([b"\xed\xa0\x80", b"\xff", b"\xc3(", b"\x80abc"])
            line = b'{"jsonrpc":"2.0","id":"' + request_id.encode() + b'","method":"'
            line += method.encode("utf-8", "surrogatepass") + junk + b'"}'
            out.append(Envelope(line, answer_id=broken_json.request_id(line)))
        elif kind == 12:  # a response to a request nobody made
            reply = rng.choice([{"result": params}, {"error": {"code": "x", "message": params}}])
            message = {"jsonrpc": "2.0", "id": rng.choice([*ODD_IDS, "\ud800", 99_999]), **reply}
            out.append(Envelope(dumps(message)))
        elif kind == 13:  # a batch, a bare value, jsonrpc missing or wrong
            request_id = f"v{number}"
            choice = rng.randrange(3)
            if choice == 0:
                out.append(Envelope(dumps([{"jsonrpc": "2.0", "id": 1, "method": method}])))
            elif choice == 1:
                out.append(Envelope(dumps(rng.choice([None, 5, "\ud800", [], True]))))
            else:
                message = {"jsonrpc": rng.choice([None, "1.0", 2, "\ud800"]), "id": request_id}
                out.append(Envelope(dumps({**message, "method": method}), answer_id=request_id))
        elif kind == 14:  # a method that is not a string, a surrogate key at the top
            request_id = f"m{number}"
            message = {"jsonrpc": "2.0", "id": request_id, "method": _value(rng)}
            if isinstance(message["method"], str):
                message["method"] = 5
            message[_odd_string(rng)] = _value(rng)
            out.append(Envelope(dumps(message), answer_id=request_id))
        else:  # a request with a surrogate in every string
            request_id = f"\udfff{number}\ud800"
            params = {"\ud800": "\udc80", "k": ["\udfff", {"\udc00": "\ud83d"}]}
            message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            out.append(Envelope(dumps(message), answer_id=request_id))
    return out


def key(request_id: Any) -> str:
    """A reply's id as a dictionary key ("7" and 7 apart, as JSON tells them apart)."""
    return json.dumps(request_id)


def owed(lines: list[Envelope]) -> set[str]:
    """The keys of the ids whose replies the server owes."""
    return {key(envelope.answer_id) for envelope in lines if envelope.answer_id is not None}
