"""Text files as bytes on disk: versions, decoding that round-trips, atomic writes.

Every writer goes through `encode_like` and fs/diskwrite.py, so encoding,
BOM, line endings, the final newline and the mode of a file survive any edit, and a crash
at any instant leaves either the old or the new file.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import os
import stat
from pathlib import Path

import attrs

from lsp_server.fs import leftover_temps, legacy_text

BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
BINARY_SNIFF_BYTES = 8192
ASCII_PROBE = bytes(range(0x20, 0x7F)) + b"\t\r\n"


@attrs.frozen
class FileVersion:
    """What identifies a file's content: metadata plus, when affordable, the bytes' hash."""

    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int
    sha256: str | None

    def same_metadata(self, other: FileVersion) -> bool:
        return (self.device, self.inode, self.size, self.mtime_ns, self.ctime_ns) == (
            other.device,
            other.inode,
            other.size,
            other.mtime_ns,
            other.ctime_ns,
        )

    def same_content(self, other: FileVersion) -> bool:
        """Content identity: the hashes when both have one (inode numbers are reused and
        timestamps tick coarsely, so equal metadata does not prove equal bytes); metadata
        only for files too large to hash."""
        if self.sha256 is not None and other.sha256 is not None:
            return self.sha256 == other.sha256
        return self.same_metadata(other)


@attrs.frozen
class BufferVersion:
    """An editor buffer's version: the client's document version plus the text's hash."""

    uri: str
    version: int
    sha256: str

    def same_content(self, other: BufferVersion) -> bool:
        return (
            self.uri == other.uri
            and self.version == other.version
            and (self.sha256 == other.sha256)
        )


Version = FileVersion | BufferVersion


@attrs.frozen
class TextFile:
    """A decoded text file. `text` keeps the original line endings exactly."""

    path: Path
    text: str
    encoding: str
    bom: bytes
    version: Version
    mode: int | None = None
    source: str = "disk"

    @property
    def reported_encoding(self) -> str:
        name = self.encoding + (" with BOM" if self.bom else "")
        return name

    @property
    def newline(self) -> str:
        return dominant_newline(self.text)


class DecodeError(Exception):
    """The bytes are not text we can round-trip (binary or undecodable)."""


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def version_from_stat(st: os.stat_result, data: bytes | None) -> FileVersion:
    return FileVersion(
        device=st.st_dev,
        inode=st.st_ino,
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
        ctime_ns=st.st_ctime_ns,
        sha256=sha256_hex(data) if data is not None else None,
    )


def looks_binary(data: bytes) -> bool:
    if any(data.startswith(bom) for bom, _ in BOMS):
        return False
    return b"\x00" in data[:BINARY_SNIFF_BYTES]


def decode(data: bytes) -> tuple[str, str, bytes]:
    """Decode to (text, encoding, bom) such that encoding back gives the same bytes."""
    for bom, encoding in BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom) :].decode(encoding), encoding, bom
            except UnicodeDecodeError as exc:
                raise DecodeError(f"invalid {encoding} after its BOM") from exc
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        raise DecodeError("the file contains NUL bytes")
    try:
        return data.decode("utf-8"), "utf-8", b""
    except UnicodeDecodeError:
        pass
    for encoding in legacy_text.legacy_candidates(data):
        try:
            text = data.decode(encoding)
            ascii_safe = ASCII_PROBE.decode(encoding) == ASCII_PROBE.decode("ascii")
        except (UnicodeDecodeError, LookupError):
            continue
        if not ascii_safe:
            continue  # edits of ASCII text must stay ASCII bytes (no UTF-16 or EBCDIC guesses)
        if text.encode(encoding) == data:
            return text, encoding, b""
    # Latin-1 maps every byte to one character and back: always a faithful round trip.
    return data.decode("latin-1"), "latin-1", b""


def encode_like(text: str, encoding: str, bom: bytes) -> bytes:
    try:
        return bom + text.encode(encoding)
    except UnicodeEncodeError as exc:
        raise DecodeError(
            f"the new text has characters that {encoding} cannot represent (position {exc.start})"
        ) from exc


def dominant_newline(text: str) -> str:
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    return "\r\n" if crlf > lf else "\n"


def adapt_newlines(new_text: str, newline: str) -> str:
    """Give text written by a model (usually LF) the file's line ending."""
    if newline == "\r\n":
        return new_text.replace("\r\n", "\n").replace("\n", "\r\n")
    return new_text


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _write_temp(folder: Path, name: str, data: bytes, mode: int | None) -> Path:
    # Named as a toolhost temp file, so that a killed write's leftover is swept at the next
    # start (fs/leftover_temps.py).
    temp = folder / leftover_temps.temp_name(name)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            temp.chmod(stat.S_IMODE(mode))
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp


def new_file_mode() -> int:
    """The permission bits a new file gets (0o666 less the umask). Read from
    /proc/self/status: setting the umask to learn it is process-wide, and a thread creating
    a file or folder meanwhile (a command's 0700 state folder) would get the wrong bits."""
    return 0o666 & ~_process_umask()


def _process_umask() -> int:
    with contextlib.suppress(OSError, ValueError), Path("/proc/self/status").open("rb") as status:
        for line in status:
            if line.startswith(b"Umask:"):
                return int(line.split()[1], 8)
    umask = os.umask(0o022)  # no /proc (not Linux, or older than 4.7): the racy way
    os.umask(umask)
    return umask


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> None:
    """Create or replace a small file of toolhost's own (policy file, state): readers see
    the old or the new content, never half. An existing file keeps its mode unless one is
    given; a new one gets the umask's."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            mode = new_file_mode()
    temp = _write_temp(path.parent, path.name, data, mode)
    try:
        temp.replace(path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def atomic_create(path: Path, data: bytes) -> None:
    """Create `path` with all of `data` at once; FileExistsError if something is there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = _write_temp(path.parent, path.name, data, new_file_mode())
    try:
        # link() never replaces: a concurrent creator makes this fail with EEXIST.
        os.link(temp, path)
    finally:
        temp.unlink(missing_ok=True)
    _fsync_dir(path.parent)
