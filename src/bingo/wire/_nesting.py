"""How deep JSON may nest: the one limit, its check, and the top level of a document past it.

Owns `MAX_DEPTH` and the two scans every decode site uses before it trusts a document it did
not write (a wire line, a manifest, a settings file, a cached declaration, a model's stream):
`too_deep`, which answers whether containers nest past the limit without decoding anything,
and `top_members`, which reads the members of an object too deep to decode whole, each value
left as its bytes, so that a JSON-RPC answer nested too deeply can still fail the one call it
answers. It does not decode values or say what a too-deep document costs: each boundary
maps it into its own error.

Why a limit of our own, checked before decoding, rather than catching RecursionError alone:
msgspec and the stdlib's json raise RecursionError at about the interpreter's recursion limit
(1 000 frames, less whatever the stack already holds), and what decoded a few levels under
it (a View, a settings object, a tool's input) later fails in whatever walks it recursively
(`fold`, the settings merge, an encoder) on a deeper stack, far from the bytes that caused
it. Under `MAX_DEPTH` every walk has room to spare.
"""

from __future__ import annotations

import re
from typing import Final

import msgspec

__all__ = ["MAX_DEPTH", "too_deep", "top_members"]

MAX_DEPTH: Final = 128
"""Deepest nesting of arrays and objects accepted in JSON from elsewhere. serde_json's default
recursion limit; a message, a manifest or a settings file needs a small part of it."""

# A string, or a run from an opener up to the next closer or string, or a run from a closer
# up to the next opener or string: the search skips the rest in C, and `[1,[1,[1,` is one
# token however long it is.
_RUNS = re.compile(rb'"(?:[^"\\]++|\\.)*+"|([\[{][^"\]}]*+)|([\]}][^"\[{]*+)', re.DOTALL)
# The tokens of an object's top level, one at a time: a string, a bracket, a comma or colon.
_MEMBER = re.compile(rb'("(?:[^"\\]++|\\.)*+")|([\[{])|([\]}])|([,:])', re.DOTALL)
_OPENS: Final = 1
_CLOSES: Final = 2

# One kind of bracket, and nothing but brackets and quotes: what `too_deep` measures.
_ONE_KIND = bytes.maketrans(b"{}", b"[]")
_NOT_STRUCTURE = bytes(set(range(256)) - set(b'"[]{}'))
_TURNS_WALKED: Final = 16
"""Innermost pairs (`[]`, each a turn from going in to coming out) few enough to walk run by
run in Python; past it, one `bytes.replace` in C takes them all away, one level of depth."""
_BRACKET_RUNS = re.compile(rb"\[+|\]+")
_OPEN: Final = ord("[")


def too_deep(data: bytes | str, limit: int = MAX_DEPTH) -> bool:
    """Whether the JSON text `data` nests arrays and objects more than `limit` deep.

    Exact for valid JSON. For text that is not, it may say True where a decoder would have
    stopped at a fault first, and False only for text too short to hold valid JSON that deep
    (which no decoder can follow deep enough to matter). Text shorter than that costs a `len`;
    one with no more than `limit` brackets (nearly every message), two `count`s; one with
    more, a few passes of bytes methods in C and a walk of at most `_TURNS_WALKED` runs."""
    if len(data) < 2 * (limit + 1):
        return False
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    # Strings: once escaped backslashes and quotes are gone, every quote left opens or closes
    # one, so the pieces between quotes alternate outside, inside, outside (with no backslash
    # before any quote, every quote already does). Two quotes side by side (an empty string,
    # or two strings whose separator is gone) change no bracket's side: `replace` takes them
    # away in C before the pieces are cut.
    if b'\\"' in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = raw.translate(_ONE_KIND, _NOT_STRUCTURE).replace(b'""', b"")
    if b'"' in structure:
        structure = b"".join(structure.split(b'"')[::2])
    if structure.count(b"[") <= limit:
        return False
    for removed in range(limit + 1):
        if structure.count(b"[]") <= _TURNS_WALKED:
            return _deeper_than(structure, limit - removed)
        # Takes away exactly the innermost pairs, all at once: one level of depth.
        structure = structure.replace(b"[]", b"")
    return True


def _deeper_than(structure: bytes, limit: int) -> bool:
    """Whether the brackets `structure` (`[` and `]` only) nest more than `limit` deep."""
    depth = 0
    for run in _BRACKET_RUNS.finditer(structure):
        if structure[run.start()] == _OPEN:
            depth += run.end() - run.start()
            if depth > limit:
                return True
        else:
            depth -= run.end() - run.start()
    return False


def _closers(data: bytes, start: int, end: int) -> int:
    return data.count(b"]", start, end) + data.count(b"}", start, end)


def _past_value(data: bytes, at: int) -> int:
    """Where the array or object opening at `at` ends (just past its closer); -1 if never."""
    depth = 0
    for token in _RUNS.finditer(data, at):
        kind, start, end = token.lastindex, token.start(), token.end()
        if kind == _OPENS:
            depth += data.count(b"[", start, end) + data.count(b"{", start, end)
        elif kind == _CLOSES:
            if _closers(data, start, end) < depth:
                depth -= _closers(data, start, end)
                continue
            # The value closes inside this run: the shortest prefix of it holding `depth`
            # closers, found by halving (counts run in C; the run may be 100 000 long).
            low, high = start + 1, end
            while low < high:
                middle = (low + high) // 2
                if _closers(data, start, middle) < depth:
                    low = middle + 1
                else:
                    high = middle
            return low
    return -1


def top_members(data: bytes) -> dict[str, bytes] | None:
    """The members of the JSON object `data`, each value as its bytes (stripped, undecoded),
    read without decoding any value: for a document too deep to decode whole. A repeated key
    keeps its last value. None when `data` is not an object (or its top level is malformed);
    the values themselves are not checked."""
    first = len(data) - len(data.lstrip())
    if data[first : first + 1] != b"{":
        return None
    members: dict[str, bytes] = {}
    key: str | None = None
    start = -1  # where the current member's value begins, once its colon is seen
    pos = first + 1
    while (token := _MEMBER.search(data, pos)) is not None:
        kind, at, pos = token.lastindex, token.start(), token.end()
        if kind == 1:  # a string: a key, or a value (skipped)
            if start < 0:
                if key is not None:
                    return None  # two keys in a row
                try:
                    key = msgspec.json.decode(token.group(), type=str)
                except msgspec.DecodeError:
                    return None
        elif kind == 2:  # a member's value is an array or object: skip it whole
            if start < 0:
                return None
            pos = _past_value(data, at)
            if pos < 0:
                return None
        elif kind == 3:  # the object closes
            if data[at : at + 1] != b"}" or data[pos:].strip():
                return None
            if key is not None:
                if start < 0:
                    return None
                members[key] = data[start:at].strip()
            return members
        elif data[at : at + 1] == b":":
            if key is None or start >= 0:
                return None
            start = pos
        else:  # a comma
            if key is None or start < 0:
                return None
            members[key] = data[start:at].strip()
            key, start = None, -1
    return None
