"""The ripgrep engine's plain line records against rg's own JSON.

A folder search on one line reads rg's `--null` records instead of its `--json`; these
tests say that it finds exactly what rg's JSON says (same files in the same order, same
lines, same bounded text of long lines) over a tree of awkward cases: CRLF, Latin-1,
UTF-16 with a BOM, lone surrogates (CESU-8 bytes), a last line without a newline, long
lines with multibyte and invalid bytes before the match, binary files, file names that
are not UTF-8 or look like record heads, secrets. Where the records cannot say it
exactly (a name holding a newline, rg's note about a binary file it stopped reading
after a match) the engine must notice and search again with --json. The reference is
rg's JSON folded here independently of the engine's own reader.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lsp_server.search import ripgrep
from lsp_server.search.query import MAX_LINE_CHARS, FileHits, Line, SearchQuery, cut_line
from tests.search.conftest import SECRET_GLOBS

LONG_BEFORE = b"x" * 300 + "é".encode() * 120 + b"\xff\xfe" * 5
PLAIN_TREE: dict[bytes, bytes] = {
    b"crlf.txt": b"alpha foo\r\nbeta\r\nfoo gamma\r\n\r\nfoo\r\n",
    b"latin1.txt": b"caf\xe9 foo\nna\xefve\nfoo \xe0 la\n",
    b"surrogate.txt": b"lone \xed\xa0\x80 foo\n\xed\xb0\x80 foo end\nplain\n",
    b"utf16.txt": "foo in utf16\nbar\nfoo again\n".encode("utf-16"),
    b"long.txt": (
        LONG_BEFORE + b"foo" + b"y" * 1500 + b"\n"
        b"foo" + b"z" * 900 + b"\n" + b"w" * 900 + b"foo\n" + "日本".encode() * 400 + b"foo\n"
    ),
    b"nonl.txt": b"first\nlast foo",
    b"empty_lines.txt": b"\n\nfoo\n\n\n",
    b"ctx.txt": b"foo\n1\n2\n3\n4\nfoo\n12:34:56 time\n7-8 dash\nfoo\n",
    b"12-3:4:name.txt": b"foo in a name like a record head\n",
    b"caf\xe9.txt": b"foo in a Latin-1 name\n",
    b"\xed\xa0\x80 surrogate name.txt": b"foo in a surrogate name\n",
    b"sub/dir/deep.py": b"def foo():\n    return 'foo'\n",
    b"bin/early.bin": b"foo\x00bar\nfoo\n",
    b"tab\tname.txt": b"foo tab\n",
    b".env": b"foo secret\n",
    b"keys/server.pem": b"foo key\n",
}
# What only the JSON says exactly: a name with a newline, and a binary file rg stops
# reading after a match (its plain output adds a WARNING line).
ODD_TREE: dict[bytes, bytes] = {
    **PLAIN_TREE,
    b"odd\nname.txt": b"foo in a name with a newline\n",
    b"bin/late.bin": b"foo first\n" + b"q" * 70_000 + b"\nfoo mid\n\x00foo after\n",
}
PATTERNS = ["foo", r"f\w+", "é|日本", r"^$", "nothing-matches-this", r"\bfoo\b.*$"]


def build(root: Path, files: dict[bytes, bytes]) -> Path:
    base = os.fsencode(root)
    for rel, content in files.items():
        path = base + b"/" + rel
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(content)
    return root


def query_for(root: Path, pattern: str, **args: Any) -> SearchQuery:
    return SearchQuery(pattern, target=root, ignore_base=root, excluded=SECRET_GLOBS, **args)


def _text(value: dict[str, Any]) -> str:
    if "text" in value:
        return str(value["text"])
    return base64.b64decode(value["bytes"]).decode("utf-8", "replace")


def _name(value: dict[str, Any]) -> str:
    name = value["text"] if "text" in value else os.fsdecode(base64.b64decode(value["bytes"]))
    return str(name).removeprefix("./")


def rg_json(rg: Path, root: Path, pattern: str, **args: Any) -> list[FileHits]:
    """rg's own --json for the same search, one event a line, folded here."""
    flags = ["--ignore-case"] if args.get("ignore_case") else []
    if args.get("context"):
        flags.append(f"--context={args['context']}")
    command = [
        str(rg), "--json", "--no-config", "--no-require-git", "--no-ignore-global",
        *flags, *[f"--glob=!{glob}" for glob in SECRET_GLOBS], "--regexp", pattern, "--", ".",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=root, capture_output=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    files: list[FileHits] = []
    for raw in done.stdout.splitlines():
        event = json.loads(raw)
        data = event["data"]
        if event["type"] == "begin":
            files.append(FileHits(_name(data["path"])))
        elif event["type"] in ("match", "context"):
            text = _text(data["lines"]).removesuffix("\n")
            number = data["line_number"]
            is_match = event["type"] == "match"
            match_at = None
            if is_match and data["submatches"] and len(text) > MAX_LINE_CHARS:
                start = data["submatches"][0]["start"]
                before = text.encode("utf-8", "surrogateescape")[:start]
                match_at = len(before.decode("utf-8", "replace"))
            files[-1].lines.append(Line(number, cut_line(text, number, match_at), is_match))
            files[-1].matched_lines += is_match
    files.sort(key=lambda hits: hits.path.split("/"))
    return files


CASES = [(p, c, i) for p in PATTERNS for c in (0, 2) for i in (False, True)]


@pytest.mark.parametrize(("pattern", "context", "ignore_case"), CASES)
async def test_records_say_what_rg_json_says(
    tmp_path: Path, rg_path: Path, pattern: str, context: int, ignore_case: bool
) -> None:
    root = build(tmp_path / "tree", PLAIN_TREE)
    query = query_for(root, pattern, context=context, ignore_case=ignore_case)
    # A folder search reads the records, and they alone (no second run) give the answer.
    assert ripgrep.output_for(query, ".") == "lines"
    outcome = await ripgrep._run(rg_path, query, "lines")
    assert outcome is not None
    expected = rg_json(rg_path, root, pattern, context=context, ignore_case=ignore_case)
    assert outcome.files == expected
    assert (await ripgrep.search(rg_path, query)).files == outcome.files


def test_the_tree_holds_the_cases(tmp_path: Path, rg_path: Path) -> None:
    root = build(tmp_path / "tree", PLAIN_TREE)
    files = {hits.path: hits for hits in rg_json(rg_path, root, "foo")}
    assert "12-3:4:name.txt" in files and "caf\udce9.txt" in files
    assert "\udced\udca0\udc80 surrogate name.txt" in files
    assert files["crlf.txt"].lines[0].text == "alpha foo\r"
    assert "\ufffd" in files["latin1.txt"].lines[0].text
    assert files["utf16.txt"].matched_lines == 2  # transcoded from UTF-16
    assert files["nonl.txt"].lines == [Line(2, "last foo", True)]
    long = files["long.txt"].lines[0].text
    assert "chars left out" in long and "foo" in long  # the match shown mid-line
    for left_out in ("bin/early.bin", ".env", "keys/server.pem"):
        assert left_out not in files


@pytest.mark.parametrize("context", [0, 1])
async def test_what_records_cannot_say_is_searched_again_as_json(
    tmp_path: Path, rg_path: Path, context: int
) -> None:
    root = build(tmp_path / "tree", ODD_TREE)
    query = query_for(root, "foo", context=context)
    assert await ripgrep._run(rg_path, query, "lines") is None
    expected = rg_json(rg_path, root, "foo", context=context)
    assert {"odd\nname.txt", "bin/late.bin"} <= {hits.path for hits in expected}
    assert (await ripgrep.search(rg_path, query)).files == expected


async def test_json_where_records_would_differ(tmp_path: Path, rg_path: Path) -> None:
    # One file (on stdin: rg's plain output says "binary file matches" instead of the
    # lines) and multiline matches stay on --json.
    root = build(tmp_path / "tree", ODD_TREE)
    single = SearchQuery("foo", target=root / "bin" / "late.bin", ignore_base=root)
    assert ripgrep.output_for(single, "-") == "json"
    outcome = await ripgrep.search(rg_path, single)
    assert [hits.path for hits in outcome.files] == ["late.bin"]
    assert [line.number for line in outcome.files[0].lines] == [1, 3, 5]  # NUL: a line end
    multi = query_for(root, "foo\n1", multiline=True)
    assert ripgrep.output_for(multi, ".") == "json"
    assert [h.path for h in (await ripgrep.search(rg_path, multi)).files] == ["ctx.txt"]


async def test_a_cancelled_search_ends_rg(tmp_path: Path, rg_path: Path) -> None:
    # rg blocks reading a FIFO nobody writes to; cancelling the search (what a cancelled
    # call does) must end it long before the deadline.
    os.mkfifo(tmp_path / "pipe")
    query = SearchQuery("x", target=tmp_path / "pipe", ignore_base=tmp_path, timeout_seconds=120)
    task = asyncio.create_task(ripgrep.search(rg_path, query))
    while not rg_children():
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    assert rg_children() == []


def rg_children() -> list[int]:
    """The rg processes this process started and has not reaped."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat_line = (entry / "stat").read_text()
        except (OSError, ValueError):
            continue
        comm, _, rest = stat_line.partition(") ")
        if comm.endswith("(rg") and int(rest.split()[1]) == os.getpid():
            found.append(int(entry.name))
    return found
