"""printable_path's shortcut for printable ASCII names gives what the full conversion
gives (bytes that are not UTF-8 as \\xNN, newline, CR and tab escaped)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_server.search.render import _CONTROL, printable_path


def full_conversion(path: str) -> str:
    text = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return text.translate(_CONTROL)


names = st.text(
    st.one_of(
        st.characters(min_codepoint=0, max_codepoint=0x7F),
        st.sampled_from(["é", "日", "\udce9", "\udcff", "\u2028", "\x85"]),
    ),
    max_size=12,
)


@given(path=names)
@settings(max_examples=500, deadline=None)
def test_the_shortcut_equals_the_full_conversion(path: str) -> None:
    assert printable_path(path) == full_conversion(path)
