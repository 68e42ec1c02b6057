"""`toolhost call` sessions kept between invocations: what the agent has read (the
observations that authorise a later write) and the stored results its refs page through.

Under the state folder, one folder per workspace root and session id (both encoded by
runtime/sessions/session_names.py, so no id can name a path):

    cli-sessions/<root>/<session>/session.json   observations and the stored results' list
                                  results/       one file per stored result
                                  counter        the last ref number handed out
                                  approvals.json the rules the user allowed "for this
                                                 session" at the terminal prompt
                                  lock           flock, held only to merge-and-write

Two processes on one session: each loads session.json (always whole: it is only ever
replaced by rename), runs its call, then under the lock re-reads it and merges its own
changes (the observations it added or changed win; stored results are the union, the newest
kept) before replacing it. Ref numbers are reserved under the same lock, so two processes
never hand out one ref. The lock is never held while a tool runs.

A loaded observation is a claim, not a licence: writers still compare it with the file as
it is now (runtime/file_service.py), so a file changed between two invocations is refused as stale.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import itertools
import json
import logging
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from lsp_server.fs import textio
from lsp_server.fs.textio import BufferVersion, FileVersion, Version
from lsp_server.runtime.sessions import session_bounds
from lsp_server.runtime.sessions.observations import Observation
from lsp_server.runtime.sessions.session import Session
from lsp_server.runtime.sessions.session_bounds import LOCK, RECORD, SessionBounds
from lsp_server.runtime.sessions.session_names import file_name
from lsp_server.runtime.sessions.stored_results import ResultStore, StoredResult, spill_name

log = logging.getLogger(__name__)

FORMAT = 1
RESULTS = "results"
COUNTER = "counter"
APPROVALS = "approvals.json"


@attrs.frozen
class SessionRecord:
    observations: dict[Path, Observation] = attrs.Factory(dict)
    results: list[StoredResult] = attrs.Factory(list)


class SessionFiles:
    """The CLI's sessions of one workspace root (`toolhost call --root R --session S`)."""

    def __init__(self, folder: Path, root: Path, bounds: SessionBounds | None = None) -> None:
        self.folder = folder
        self.root = root
        self.root_folder = folder / file_name(str(root), label=root.name)
        self.bounds = bounds or SessionBounds()
        self._max_results: dict[str, int] = {}
        self._loaded: dict[str, dict[Path, Observation]] = {}
        self.problems: list[str] = []
        """Why a session could not be kept (an unwritable state folder): the CLI says so."""

    def session_folder(self, session_id: str) -> Path:
        return self.root_folder / file_name(session_id)

    def results_store(self, session_id: str, max_results: int) -> ResultStore:
        """Every stored text goes to the session's folder, under a ref reserved on disk."""
        folder = self.session_folder(session_id)
        self._max_results[session_id] = max_results
        return ResultStore(
            session_id,
            max_results,
            folder / RESULTS,
            numbers=functools.partial(self._reserve_number, folder, itertools.count(1)),
            spill_bytes=-1,
        )

    def load(self, session: Session) -> None:
        record = read_record(self.session_folder(session.id))
        for path, observation in record.observations.items():
            session.observations.record(path, observation)
        for item in record.results:
            session.results.adopt(item)
        self._loaded[session.id] = dict(session.observations.items())

    def save(self, session: Session) -> None:
        """Merge this process's changes into the session on disk, then keep the bounds."""
        try:
            self._save(session)
        except OSError as exc:
            self.problems.append(
                f"session {session.id!r} could not be kept in {self.root_folder} ({exc}); "
                "the next call starts it afresh"
            )

    def _reserve_number(self, folder: Path, fallback: Iterator[int]) -> int:
        try:
            return _reserve_number(folder)
        except OSError:  # nothing of this session will be kept: any number will do
            return next(fallback)

    def _save(self, session: Session) -> None:
        folder = self.session_folder(session.id)
        _make_folder(folder)
        loaded = self._loaded.get(session.id, {})
        changed = {p: o for p, o in session.observations.items() if loaded.get(p) != o}
        limit = self._max_results.get(session.id, len(session.results.items()))
        with _locked(folder):
            on_disk = read_record(folder)
            observations = {**on_disk.observations, **changed}
            every = [*on_disk.results, *session.results.items()]
            results = _within_bytes(_merged_results(every, limit), self.bounds.total_bytes)
            _write_record(folder, session.id, self.root, observations, results)
            _remove_unlisted(folder, every, results)
        self._loaded[session.id] = observations
        session_bounds.prune(self.folder, self.bounds, keep=folder)

    def approvals(self, session_id: str) -> list[str]:
        """The rules allowed for this session at earlier prompts (a missing or unreadable
        file is none: the user is asked again)."""
        path = self.session_folder(session_id) / APPROVALS
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable session approvals %s: %s", path, exc)
            return []
        rules = raw.get("rules") if isinstance(raw, dict) else None
        if not isinstance(rules, list):
            return []
        return [rule for rule in rules if isinstance(rule, str)]

    def keep_approvals(self, session_id: str, rules: list[str]) -> None:
        """Add `rules` to the session's approvals (private file, replaced by rename)."""
        folder = self.session_folder(session_id)
        try:
            _make_folder(folder)
            with _locked(folder):
                kept = list(dict.fromkeys([*self.approvals(session_id), *rules]))
                data = json.dumps({"format": FORMAT, "rules": kept}, ensure_ascii=True)
                textio.atomic_write(folder / APPROVALS, data.encode("ascii"), mode=0o600)
        except OSError as exc:
            self.problems.append(
                f"the session's approvals could not be kept in {folder} ({exc}); "
                "the next call asks again"
            )

    def drop(self, session_id: str) -> None:
        """Forget what the session read, stored and was allowed (`toolhost call --fresh`);
        the counter stays, so a new ref never repeats a dropped one."""
        folder = self.session_folder(session_id)
        try:
            with _locked(folder):
                (folder / RECORD).unlink(missing_ok=True)
                (folder / APPROVALS).unlink(missing_ok=True)
                shutil.rmtree(folder / RESULTS, ignore_errors=True)
        except FileNotFoundError:
            return  # nothing kept: already fresh
        except OSError as exc:
            self.problems.append(f"session {session_id!r} could not be dropped ({exc})")


def read_record(folder: Path) -> SessionRecord:
    """What session.json says; an unreadable or foreign file is an empty session (logged):
    the next save replaces it."""
    try:
        raw = json.loads((folder / RECORD).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return SessionRecord()
    except (OSError, ValueError) as exc:
        log.warning("ignoring unreadable session file %s: %s", folder / RECORD, exc)
        return SessionRecord()
    try:
        if raw.get("format") != FORMAT:
            raise ValueError(f"format {raw.get('format')!r}, expected {FORMAT}")
        observations = dict(_decode_observation(item) for item in raw["observations"])
        results = [_decode_result(folder, item) for item in raw["results"]]
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        log.warning("ignoring malformed session file %s: %s", folder / RECORD, exc)
        return SessionRecord()
    return SessionRecord(observations, results)


def _write_record(
    folder: Path,
    session_id: str,
    root: Path,
    observations: dict[Path, Observation],
    results: list[StoredResult],
) -> None:
    record = {
        "format": FORMAT,
        "session": session_id,
        "root": str(root),
        "observations": [_encode_observation(p, o) for p, o in observations.items()],
        "results": [
            {"ref": r.ref, "number": r.number, "size": r.size, "sha256": r.sha256} for r in results
        ],
    }
    # ensure_ascii: ids and paths with lone surrogates round-trip as \udcxx escapes.
    data = json.dumps(record, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    textio.atomic_write(folder / RECORD, data, mode=0o600)


def _merged_results(every: list[StoredResult], limit: int) -> list[StoredResult]:
    """Both processes' results whose text is still there, oldest first, the newest kept."""
    by_ref = {item.ref: item for item in every}
    present = [i for i in by_ref.values() if i.spill_path is not None and i.spill_path.exists()]
    present.sort(key=lambda item: item.number)
    return present[-limit:] if limit > 0 else []


def _within_bytes(results: list[StoredResult], budget: int) -> list[StoredResult]:
    """One session never outgrows the whole budget: its oldest results go first."""
    kept = list(results)
    while kept and sum(item.size for item in kept) > budget:
        kept.pop(0)
    return kept


def _remove_unlisted(folder: Path, evicted: list[StoredResult], kept: list[StoredResult]) -> None:
    """Delete the files of evicted results now; other unlisted files (temporary files of a
    killed write, a concurrent process's result not yet listed) once they are old."""
    listed = {item.spill_path for item in kept}
    for item in evicted:
        if item.spill_path is not None and item.spill_path not in listed:
            item.spill_path.unlink(missing_ok=True)
    names = {path.name for path in listed if path is not None}
    cutoff = time.time() - session_bounds.UNLISTED_GRACE_SECONDS
    strays = [p for p in _files(folder / RESULTS) if p.name not in names]
    for path in [*strays, *folder.glob(".*.toolhost-tmp")]:
        with contextlib.suppress(OSError):
            if path.stat().st_mtime < cutoff:
                path.unlink()


def _files(folder: Path) -> list[Path]:
    try:
        return [p for p in folder.iterdir() if p.is_file()]
    except OSError:
        return []


def _reserve_number(folder: Path) -> int:
    """The next ref number of this session, taken under its lock."""
    _make_folder(folder)
    with _locked(folder):
        try:
            last = int((folder / COUNTER).read_text(encoding="ascii"))
        except (OSError, ValueError):
            last = max((item.number for item in read_record(folder).results), default=0)
        textio.atomic_write(folder / COUNTER, f"{last + 1}\n".encode("ascii"), mode=0o600)
    return last + 1


def _make_folder(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


# -- the JSON form -------------------------------------------------------------------


def _encode_observation(path: Path, observation: Observation) -> dict[str, Any]:
    version: dict[str, Any] | None = None
    if isinstance(observation.version, FileVersion):
        version = {"kind": "file", **attrs.asdict(observation.version)}
    elif isinstance(observation.version, BufferVersion):
        version = {"kind": "buffer", **attrs.asdict(observation.version)}
    return {"path": str(path), "state": observation.state, "version": version}


def _decode_observation(item: dict[str, Any]) -> tuple[Path, Observation]:
    path = Path(_typed(item, "path", str))
    if not path.is_absolute():
        raise ValueError(f"observed path {path} is not absolute")
    state = item["state"]
    if state == "absent":
        return path, Observation("absent")
    if state != "present":
        raise ValueError(f"unknown observation state {state!r}")
    return path, Observation("present", _decode_version(item["version"]))


def _decode_version(raw: dict[str, Any]) -> Version:
    kind = raw["kind"]
    if kind == "file":
        sha = raw["sha256"]
        if sha is not None and not isinstance(sha, str):
            raise TypeError("sha256 is not a string")
        return FileVersion(
            device=_typed(raw, "device", int),
            inode=_typed(raw, "inode", int),
            size=_typed(raw, "size", int),
            mtime_ns=_typed(raw, "mtime_ns", int),
            ctime_ns=_typed(raw, "ctime_ns", int),
            sha256=sha,
        )
    if kind == "buffer":
        return BufferVersion(
            _typed(raw, "uri", str), _typed(raw, "version", int), _typed(raw, "sha256", str)
        )
    raise ValueError(f"unknown version kind {kind!r}")


def _decode_result(folder: Path, item: dict[str, Any]) -> StoredResult:
    ref = _typed(item, "ref", str)
    # The file's name comes from the ref, never from the record: it cannot point elsewhere.
    return StoredResult(
        ref,
        _typed(item, "size", int),
        _typed(item, "sha256", str),
        spill_path=folder / RESULTS / spill_name(ref),
        number=_typed(item, "number", int),
    )


def _typed(raw: dict[str, Any], key: str, kind: type[Any]) -> Any:
    value = raw[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise TypeError(f"{key} is not {kind.__name__}")
    return value
