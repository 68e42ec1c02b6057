"""Who is working where: every write a tool call makes, by session, agent and tool, kept
where every toolhost process on the workspace sees it.

One JSON line per write in `<state>/activity/<root's name>.jsonl` (appended with O_APPEND,
one write() per line, so the processes of two servers on one folder do not tear each
other's lines; rotated past MAX_LOG_BYTES). A line names the file, the session, its agent,
the tool, the time, the sha256 of the text the write left and a digest of each line it
added. That answers "who changed these lines since I read them" (the lines' digests), "who
left the file as it is" (the text's hash) and "which files did each session change in the
last minutes". Without a state folder the writes are kept in memory only (this process).

Names are the clients' own words: they are cut and stripped of control characters before
they appear in any result or question.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs

MAX_LOG_BYTES = 2 * 1024 * 1024
TAIL_BYTES = 512 * 1024
"""How much of the log's end a question reads (thousands of writes)."""
MAX_ADDED_DIGESTS = 256
MAX_DIGESTED_CHARS = 1024 * 1024
MAX_NAME_CHARS = 64
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def clean_name(name: str | None) -> str | None:
    """A client's name as it may appear in a result: one short line."""
    if not name:
        return None
    cleaned = _CONTROL.sub(" ", name).strip()[:MAX_NAME_CHARS]
    return cleaned or None


def names_its_agent(session: str, agent: str | None) -> bool:
    """Whether a session's name already says its agent (`codex`, `mcp:codex`, `mcp:codex#2`):
    then no "(codex)" follows it; also when there is no agent to name."""
    return not agent or session == agent or session.startswith(f"mcp:{agent}")


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def line_digest(line: str) -> int:
    return zlib.crc32(line.rstrip("\r\n").encode("utf-8", "surrogateescape"))


@attrs.frozen
class Write:
    """One write of one file by one tool call."""

    path: str
    session: str
    agent: str | None
    tool: str
    at: float
    sha: str
    """The sha256 of the text the write left (UTF-8)."""
    added: tuple[int, ...] = ()
    """A digest of each line the write added (at most MAX_ADDED_DIGESTS)."""
    pid: int = 0

    def who(self) -> str:
        """`session codex-1 (codex)`: the session, and its agent when that says more."""
        agent = f" ({self.agent})" if not names_its_agent(self.session, self.agent) else ""
        return f"session {self.session}{agent}"

    def label(self, now: float | None = None) -> str:
        """`session codex-1 (edit_file, 12 s ago)`."""
        ago = max(0, round((now if now is not None else time.time()) - self.at))
        return f"{self.who()} ({self.tool}, {ago} s ago)"

    def as_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


@attrs.frozen
class Writer:
    """Whom a FileService writes for: the call's session, its agent and tool."""

    activity: WorkspaceActivity
    session: str
    agent: str | None
    tool: str

    def wrote(self, path: Path, before: str | None, after: str | None) -> None:
        if after is not None:
            self.activity.record(path, before, after, self.session, self.agent, self.tool)


def added_lines(before: str | None, after: str) -> tuple[int, ...]:
    """Digests of the lines in `after` that `before` did not have; none for
    a file over MAX_DIGESTED_CHARS (its changes are named by the whole text's hash)."""
    if len(after) > MAX_DIGESTED_CHARS or len(before or "") > MAX_DIGESTED_CHARS:
        return ()
    old = set((before or "").splitlines())
    found = [line for line in after.splitlines() if line not in old][:MAX_ADDED_DIGESTS]
    return tuple(map(line_digest, found))


class WorkspaceActivity:
    """The writes of the workspace's sessions (every process's, through the shared log)."""

    def __init__(self, log: Path | None = None) -> None:
        self.log = log
        self._memory: deque[Write] = deque(maxlen=4096)
        self._parsed: tuple[tuple[int, int], list[Write]] | None = None
        self._made = False
        self.live: Callable[[], list[dict[str, Any]]] = list
        """This process's sessions now (their agent and in-flight calls): set by the
        session store."""

    @classmethod
    def for_root(cls, state_dir: Path | None, root: Path) -> WorkspaceActivity:
        if state_dir is None:
            return cls()
        name = f"{root.name[:32]}~{text_sha(str(root))[:16]}.jsonl"
        return cls(state_dir / "activity" / name)

    def record(
        self,
        path: Path,
        before: str | None,
        after: str,
        session: str,
        agent: str | None,
        tool: str,
    ) -> Write:
        write = Write(
            str(path),
            clean_name(session) or "?",
            clean_name(agent),
            tool,
            time.time(),
            text_sha(after),
            added_lines(before, after),
            os.getpid(),
        )
        self._keep(write)
        return write

    def touched(self, path: Path, session: str, agent: str | None, tool: str) -> None:
        """A file a shell command changed (its checkpoint says which; the text is not
        known here, so only the file and who are recorded)."""
        name, who, what = clean_name(session) or "?", clean_name(agent), clean_name(tool) or "?"
        write = Write(str(path), name, who, what, time.time(), "", (), os.getpid())
        self._keep(write)

    def _keep(self, write: Write) -> None:
        self._memory.append(write)
        if self.log is not None:
            with contextlib.suppress(OSError):  # a full disk must not fail the write itself
                self._append(write)

    def _append(self, write: Write) -> None:
        assert self.log is not None
        if not self._made:
            self.log.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._made = True
        line = (json.dumps(write.as_json(), separators=(",", ":")) + "\n").encode()
        fd = os.open(self.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        if size > MAX_LOG_BYTES:
            with contextlib.suppress(OSError):
                self.log.replace(self.log.with_suffix(".old"))

    def writes(self, since: float = 0.0) -> list[Write]:
        """Every write known, oldest first (this process's and, through the log, others')."""
        found = self._logged() if self.log is not None else list(self._memory)
        return [w for w in found if w.at >= since]

    def _logged(self) -> list[Write]:
        """The log's tail, parsed again only when the log changed."""
        assert self.log is not None
        try:
            st = self.log.stat()
        except OSError:
            return list(self._memory)
        key = (st.st_mtime_ns, st.st_size)
        if self._parsed is None or self._parsed[0] != key:
            self._parsed = (key, list(self._from_log()))
        return self._parsed[1]

    def _from_log(self) -> Iterator[Write]:
        assert self.log is not None
        try:
            with self.log.open("rb") as handle:
                size = handle.seek(0, os.SEEK_END)
                handle.seek(max(0, size - TAIL_BYTES))
                data = handle.read()
        except OSError:
            yield from self._memory
            return
        lines = data.split(b"\n")
        if len(data) >= TAIL_BYTES:
            lines = lines[1:]  # the first may be cut
        for raw in lines:
            write = _parse(raw)
            if write is not None:
                yield write

    def of_file(self, path: Path) -> list[Write]:
        return [w for w in self.writes() if w.path == str(path)]

    def left(self, path: Path, text: str) -> Write | None:
        """The last write that left `path` holding exactly `text`, or a shell command that
        changed it since (its text is not known: the last writer is the best guess)."""
        sha = text_sha(text)
        return next((w for w in reversed(self.of_file(path)) if w.sha in (sha, "")), None)

    def author_of_lines(
        self, path: Path, lines: Iterable[str], writes: list[Write]
    ) -> Write | None:
        """The last of `writes` (of this file) that added one of `lines`."""
        wanted = {line_digest(line) for line in lines}
        return next((w for w in reversed(writes) if wanted.intersection(w.added)), None)

    def recent(self, seconds: float) -> dict[tuple[str, int], dict[str, Any]]:
        """Per session and process: its agent and the files it changed in the last
        `seconds` (path -> the tool and time of its last write there)."""
        since = time.time() - seconds
        found: dict[tuple[str, int], dict[str, Any]] = {}
        for write in self.writes(since):
            entry = found.setdefault(
                (write.session, write.pid),
                {"session": write.session, "agent": write.agent, "pid": write.pid, "files": {}},
            )
            entry["files"][write.path] = {"tool": write.tool, "at": write.at}
        return found


def _parse(raw: bytes) -> Write | None:
    if not raw.strip():
        return None
    try:
        data = json.loads(raw)
        return Write(
            path=str(data["path"]),
            session=clean_name(str(data["session"])) or "?",
            agent=clean_name(data.get("agent")),
            tool=str(data["tool"]),
            at=float(data["at"]),
            sha=str(data["sha"]),
            added=tuple(int(x) for x in data.get("added", ())),
            pid=int(data.get("pid", 0)),
        )
    except (ValueError, KeyError, TypeError):
        return None
