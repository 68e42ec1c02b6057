"""Which legacy code page holds a file that is not UTF-8 (textio.decode tries them in this
order and keeps the first that reads the bytes back exactly).

charset_normalizer's guesses come first. On a short sample (fewer than SMALL_SAMPLE_BYTES
non-ASCII bytes) its guess is little more than chance: "café" in Latin-1 came out as
cp1006 ("cafﻠ", Urdu), "Привет" in cp1251 as cp1125 ("╧ЁштхҐ"), Greek in cp1253 as
cp1251 ("ГейЬ"). There the candidates, its own and the usual single-byte code pages of
Western, Central European, Cyrillic and Greek text, are ranked by how the text reads in
each: encodings that would read an ASCII byte as half of a character last (edits of ASCII
text must stay ASCII bytes), then the fewest signs of a wrong code page (a symbol where a
letter belongs, a word mixing two scripts, a Latin word with no ASCII letter in it (cp1251
read as cp1250 gives "Ďđčâĺň"), a lower-case letter followed by a capital inside a word
(KOI8-R read as cp1251 gives "рТЙЧЕФ"), then detection's own order. A few bytes that
read as well in a multi-byte code page (Chinese, Japanese, Korean) are still a guess.
"""

from __future__ import annotations

import itertools
import re
import unicodedata

SMALL_SAMPLE_BYTES = 16
SAMPLE_BYTES = 65536

_COMMON_CODE_PAGES = ("cp1252", "cp1250", "cp1251", "koi8_r", "cp1253", "iso8859_7")
"""Tried after detection's own guesses on a short sample."""

_HIGH_RUN = re.compile(rb"[\x80-\xff]+")
_WORD = re.compile(r"[^\W\d_]+")
_WESTERN_MARKS = "\u2018\u2019\u201c\u201d\u2013\u2014\u2026\u20ac\u00a0\u00b0\u00a7\u00b7\u2022"


def legacy_candidates(data: bytes) -> list[str]:
    """The encodings to try, most likely first."""
    import charset_normalizer  # only for files that are not UTF-8: not at start-up

    sample = data[:SAMPLE_BYTES]
    candidates = [match.encoding for match in charset_normalizer.from_bytes(sample)]
    candidates = list(dict.fromkeys([*candidates, "cp1252"]))
    if sum(byte >= 0x80 for byte in sample) >= SMALL_SAMPLE_BYTES:
        return candidates
    if _western(sample):  # among equally plausible readings, the usual Western one
        candidates = ["cp1252", *(c for c in candidates if c != "cp1252")]
    candidates = list(dict.fromkeys([*candidates, *_COMMON_CODE_PAGES]))
    # Only the lines with a non-ASCII byte read differently from one code page to the next:
    # rank on them (a 60 kB file with one such word: ~3 ms, not ~200, for 34 candidates).
    lines = b"\n".join(line for line in sample.split(b"\n") if _HIGH_RUN.search(line))
    return sorted(candidates, key=lambda name: (_swallows_ascii(lines, name), _odd(lines, name)))


def _western(data: bytes) -> bool:
    """Whether a few non-ASCII bytes read as Western European text: accented letters
    inside words (café, Grüße) or typographic marks, never a whole word of them as in
    Cyrillic or Greek, where each letter is a byte of its own."""
    runs = _HIGH_RUN.findall(data)
    if not runs or any(len(run) > 2 for run in runs):
        return False
    try:
        text = b"".join(runs).decode("cp1252")
    except UnicodeDecodeError:
        return False
    return all(char.isalpha() or char in _WESTERN_MARKS for char in text)


def _swallows_ascii(data: bytes, encoding: str) -> bool:
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return True
    return any(
        ord(char) >= 0x80 and any(byte < 0x80 for byte in char.encode(encoding))
        for char in set(text)
    )


def _odd(data: bytes, encoding: str) -> int:
    """Signs that `encoding` is the wrong reading of `data` (0: reads like text)."""
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return 1 << 20
    symbols = [c for c in text if ord(c) >= 0x80 and not c.isalpha() and c not in _WESTERN_MARKS]
    odd = 3 * len(symbols)
    for word in _WORD.findall(text):
        if word.isascii():
            continue
        scripts = {_script(char) for char in word}
        if len(scripts) > 1:
            odd += 2
        elif scripts == {"LATIN"} and len(word) > 2 and not any(c.isascii() for c in word):
            odd += 2  # a Latin word has an ASCII letter ("Zażółć", "été"), not "Ďđčâĺň"
        if any(a.islower() and b.isupper() for a, b in itertools.pairwise(word)):
            odd += 1
    return odd


def _script(char: str) -> str:
    """LATIN, CYRILLIC, GREEK...: the first word of the character's Unicode name."""
    return unicodedata.name(char, "?").split(" ", 1)[0]
