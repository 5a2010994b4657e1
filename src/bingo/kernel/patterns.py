"""Patterns matched in time linear in the text, whatever the pattern (ADR-0051).

Python's `re` backtracks: `(a+)+$` against a line of 40 `a`s, `*a*a*a*a*a*a*b` as a glob
against a long name, or a rule `git * b * b * b * y` against a model's 3 kB command each take
minutes to forever, in a call nothing can interrupt (and, on the event loop, with the whole
run frozen). Every pattern bingo matches against text someone else wrote is compiled here,
by RE2 (google-re2): the `grep` and `glob` tools', the permission rules' and the command
hooks' matchers (`.gitignore`'s go to pathspec's own RE2 backend).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol, cast

__all__ = ["Match", "Regex", "linear"]


class Match(Protocol):
    def start(self) -> int: ...


class Regex(Protocol):
    """A pattern compiled by `linear`: it searches `str` (`bytes` when compiled for them, and
    then its positions are byte offsets)."""

    def search(self, text: str | bytes, pos: int = 0, /) -> Match | None: ...

    def fullmatch(self, text: str | bytes, /) -> Match | None: ...

    def match(self, text: str | bytes, /) -> Match | None: ...


def linear(
    pattern: str, *, ignore_case: bool = False, dot_nl: bool = False, never_nl: bool = False, of_bytes: bool = False
) -> Regex:
    """`pattern` compiled by RE2 (google-re2), which takes time linear in the text whatever
    the pattern: a model's `(a+)+$` against a line of 40 `a`s held Python's backtracking `re`
    for hours, and the run's exit after it. Perl's syntax less look-around and
    backreferences, as ripgrep's. `dot_nl`: `.` matches a newline too; `never_nl`: no match
    crosses one (a text of lines searched whole, as each line alone); `of_bytes`: it searches
    UTF-8 bytes (no position converted from bytes to characters at each call).

    Raises:
        ValueError: RE2 refuses the pattern (its reason).
    """
    import re2  # pyright: ignore[reportMissingTypeStubs]: google-re2 ships no types

    options = re2.Options()
    options.log_errors = False  # RE2 would write its reason to stderr, under bingo's terminal
    options.case_sensitive = not ignore_case
    options.dot_nl = dot_nl
    options.never_nl = never_nl
    compile_ = cast("Callable[[str | bytes, object], Regex]", re2.compile)  # pyright: ignore[reportUnknownMemberType]
    refused = cast("type[Exception]", re2.error)  # pyright: ignore[reportUnknownMemberType]
    try:
        if of_bytes:
            return compile_(pattern.encode("utf-8", "replace"), options)
        return _Text(compile_(_characters(pattern), options))
    except refused as exc:
        reason: object = exc.args[0] if exc.args else "invalid"
        raise ValueError(reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)) from None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _characters(text: str) -> str:
    """`text` as RE2 can take it: a lone surrogate (JSON's `"\\ud800"` decodes to one, and
    no UTF-8 holds it) becomes U+FFFD, no pattern's syntax, the same in a pattern as in a
    text, so a wildcard or the same literal still matches where it stands."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


class _Text:
    """A pattern over `str`, each text given as RE2 can take it (`_characters`)."""

    __slots__ = ("_regex",)

    def __init__(self, regex: Regex) -> None:
        self._regex = regex

    def search(self, text: str | bytes, pos: int = 0, /) -> Match | None:
        return self._regex.search(_characters(text) if isinstance(text, str) else text, pos)

    def fullmatch(self, text: str | bytes, /) -> Match | None:
        return self._regex.fullmatch(_characters(text) if isinstance(text, str) else text)

    def match(self, text: str | bytes, /) -> Match | None:
        return self._regex.match(_characters(text) if isinstance(text, str) else text)
