"""The output sanitiser (INTERFACE.md §8): each control class and each invisible format
character shown escaped, readable text untouched, and, for any text at all, no live control
left in what it returns."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bingo.surfaces import escape, escape_view
from bingo.wire import CodeView, ListView, MarkdownView, StackView, TableView, TextView, fold
from tests.support.examples import examples

C0 = [c for c in range(0x20) if chr(c) not in "\n\t"]
C1 = list(range(0x80, 0xA0))
BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]


@pytest.mark.parametrize("point", [*C0, 0x7F, *C1], ids=lambda p: f"{p:#04x}")
def test_every_c0_and_c1_control_and_del_is_shown_as_its_hex_escape(point: int) -> None:
    assert escape(f"a{chr(point)}b") == f"a\\x{point:02x}b"


def test_esc_bel_osc_and_csi_are_shown_as_four_visible_characters_each() -> None:
    assert escape("\x1b]0;pwned\x07") == r"\x1b]0;pwned\x07"
    assert escape("\x1b]52;c;cHduZWQ=\x07") == r"\x1b]52;c;cHduZWQ=\x07"
    assert escape("\x1b[2J") == r"\x1b[2J"
    assert escape("\x1b]0;x\x1b\\") == "\\x1b]0;x\\x1b\\"
    assert escape("\x9b2J") == r"\x9b2J"  # the one-byte CSI


@pytest.mark.parametrize("point", BIDI, ids=lambda p: f"U+{p:04X}")
def test_bidi_overrides_and_isolates_are_shown_as_their_code_points(point: int) -> None:
    assert escape(f"abc{chr(point)}def") == f"abc<U+{point:04X}>def"


@pytest.mark.parametrize("point", [0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0xFEFF, 0x061C, 0x00AD, 0x2060, 0xE0041])
def test_invisible_format_characters_are_shown_as_their_code_points(point: int) -> None:
    assert escape(f"ab{chr(point)}cd") == f"ab<U+{point:04X}>cd"


def test_every_format_character_this_python_knows_is_escaped() -> None:
    # The sanitiser lists category Cf by hand (a scan at import would cost every start).
    missed = [
        f"U+{p:04X}" for p in range(0x110000) if unicodedata.category(chr(p)) == "Cf" and escape(chr(p)) == chr(p)
    ]
    assert missed == []


@pytest.mark.parametrize(
    "readable",
    ["naïve café ✓ 日本語 👍🏽", "line one\n\tindented\n", "", "plain ascii", "Ελληνικά, русский, עברית, العربية"],
)
def test_readable_text_passes_untouched_and_is_not_copied(readable: str) -> None:
    assert escape(readable) is readable


def test_joiners_pass_where_an_emoji_sequence_or_a_script_uses_them() -> None:
    family = "👨\u200d👩\u200d👧"
    persian = "می\u200cخواهم"
    scotland = "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"
    assert escape(family) == family
    assert escape(persian) == persian
    assert escape(scotland) == scotland


def test_joiners_are_escaped_where_no_script_uses_them() -> None:
    assert escape("plugin__word\u200dcount") == "plugin__word<U+200D>count"  # between ASCII: a look-alike
    assert escape("\u200d👍") == "<U+200D>👍"
    assert escape("é\u200d\u200dé") == "é<U+200D><U+200D>é"
    assert escape("hidden\U000e0068\U000e0069") == "hidden<U+E0068><U+E0069>"  # tag characters with no flag


def test_a_crlf_line_end_is_a_newline_and_a_lone_cr_is_escaped() -> None:
    assert escape("one\r\ntwo\r\n") == "one\ntwo\n"
    assert escape("safe\rrm -rf ~") == r"safe\x0drm -rf ~"


def test_a_lone_surrogate_is_shown_as_the_byte_it_stands_for_or_its_code_point() -> None:
    name = b"caf\xe9".decode("utf-8", "surrogateescape")  # a file name that is not UTF-8
    assert escape(name) == r"caf\xe9"
    assert escape("\ud800") == "<U+D800>"
    escape("x\ud800\udcff").encode("utf-8")  # nothing left that cannot be written


def test_a_view_is_escaped_in_every_string_it_holds_and_keeps_its_shape() -> None:
    view = StackView(
        children=[
            TableView(title="t\x1b[2J", columns=["c\x07", "n"], rows=[["\u202ex", 3], [None, 1.5]]),
            ListView(items=[TextView(text="\x1b]0;a\x07"), MarkdownView(text="*\x1b*")], ordered=True),
            CodeView(text="x = '\x1b'", language="py\x1bthon"),
        ]
    )
    assert escape_view(view) == StackView(
        children=[
            TableView(title=r"t\x1b[2J", columns=[r"c\x07", "n"], rows=[["<U+202E>x", 3], [None, 1.5]]),
            ListView(items=[TextView(text=r"\x1b]0;a\x07"), MarkdownView(text=r"*\x1b*")], ordered=True),
            CodeView(text=r"x = '\x1b'", language=r"py\x1bthon"),
        ]
    )


def test_the_fold_is_not_escaped_but_an_escaped_view_folds_with_its_columns_aligned() -> None:
    # The fold is also what a model reads: the surface escapes, not the fold.
    assert fold(TextView(text="\x1b[2J")) == "\x1b[2J"
    table = TableView(columns=["name", "n"], rows=[["\x1b", 1], ["abcd", 22]])
    assert fold(escape_view(table)) == "name   n\n----  --\n\\x1b   1\nabcd  22"


_UNSAFE_OUT = {chr(c) for c in [*C0, 0x7F, *C1]} | {chr(c) for c in BIDI}

_texts = st.text(
    alphabet=st.one_of(
        st.characters(exclude_categories=()),  # anything, lone surrogates included
        st.sampled_from(
            [
                "\x1b",
                "\x07",
                "\r",
                "\n",
                "\t",
                "\u200d",
                "\u200c",
                "\u202e",
                "\U000e0067",
                "\U000e007f",
                "🏴",
                "👍",
                "é",
            ]
        ),
    )
)


@settings(derandomize=True, deadline=None, max_examples=examples(500))
@given(text=_texts)
def test_no_text_keeps_a_live_control_or_bidi_character(text: str) -> None:
    shown = escape(text)
    assert not _UNSAFE_OUT & set(shown)
    assert not any(0xD800 <= ord(c) <= 0xDFFF for c in shown)
    shown.encode("utf-8")


@settings(derandomize=True, deadline=None, max_examples=examples(500))
@given(text=_texts)
def test_escaping_twice_changes_nothing(text: str) -> None:
    once = escape(text)
    assert escape(once) == once
