"""Host names and host patterns (ADR-0032): what a request may name, what a grant may say."""

from __future__ import annotations

import socket

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bingo.sandbox._pattern import host_matches, parse_host, parse_pattern
from tests.support.examples import examples

_label = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?", fullmatch=True)
_last = _label.filter(lambda label: not label.isdigit() and not label.startswith("0x"))
_names = st.builds(lambda labels, last: ".".join([*labels, last]), st.lists(_label, max_size=4), _last)


def _mixed_case(name: str, flips: list[bool]) -> str:
    return "".join(c.upper() if flip else c for c, flip in zip(name, flips + [False] * len(name)))


@settings(max_examples=examples(300), deadline=None)
@given(_names, st.lists(st.booleans(), max_size=60), st.booleans())
def test_a_name_matches_itself_whatever_its_case_and_trailing_dot(name: str, flips: list[bool], dot: bool) -> None:
    written = _mixed_case(name, flips) + ("." if dot else "")
    assert parse_host(written) == name
    assert parse_pattern(written) == name
    assert host_matches(parse_host(written), [parse_pattern(_mixed_case(name, flips[::-1]))])


@settings(max_examples=examples(300), deadline=None)
@given(_names, st.lists(_label, min_size=1, max_size=3))
def test_a_star_pattern_covers_every_host_below_its_suffix_and_not_the_suffix(suffix: str, below: list[str]) -> None:
    pattern = parse_pattern(f"*.{suffix}")
    assert host_matches(parse_host(".".join([*below, suffix])), [pattern])
    assert not host_matches(suffix, [pattern])


@settings(max_examples=examples(300), deadline=None)
@given(_names, _names)
def test_a_pattern_covers_nothing_that_merely_ends_with_its_text(suffix: str, other: str) -> None:
    host = f"{other}{suffix}"  # "badexample.com" against example.com and *.example.com
    for pattern in (suffix, f"*.{suffix}"):
        if host_matches(host, [parse_pattern(pattern)]):
            assert host == suffix or host.endswith("." + suffix)


@settings(max_examples=examples(300), deadline=None)
@given(st.text(max_size=40))
def test_parse_host_is_idempotent_and_gives_what_the_resolver_cannot_misread(text: str) -> None:
    try:
        host = parse_host(text)
    except ValueError:
        return
    assert parse_host(host) == host
    if ":" not in host:
        # A name the C resolver would read as an IPv4 address must be that dotted quad.
        try:
            packed = socket.inet_aton(host)
        except OSError:
            return
        assert socket.inet_ntoa(packed) == host


@settings(max_examples=examples(300), deadline=None)
@given(st.text(max_size=40))
def test_parse_pattern_is_idempotent_or_says_what_is_wrong(text: str) -> None:
    try:
        pattern = parse_pattern(text)
    except ValueError as exc:
        words = str(exc)
        assert words and "\n" not in words
        return
    assert parse_pattern(pattern) == pattern


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("PyPI.org.", "pypi.org"),
        ("*.NPMJS.org", "*.npmjs.org"),
        ("localhost", "localhost"),
        ("10.0.0.1", "10.0.0.1"),
        ("[::1]", "::1"),
        ("2001:DB8::1", "2001:db8::1"),
        ("xn--bcher-kva.de", "xn--bcher-kva.de"),
    ],
)
def test_a_pattern_is_made_canonical(written: str, canonical: str) -> None:
    assert parse_pattern(written) == canonical


@pytest.mark.parametrize(
    ("written", "words"),
    [
        ("https://pypi.org", "is a URL, not a host: write the host alone (pypi.org)"),
        ("pypi.org:443", "names a port: a grant names a host, and covers every port on it (write pypi.org)"),
        ("*", 'has a "*" a grant cannot have: write one host (pypi.org) or "*." and a host (*.npmjs.org)'),
        ("*.*.org", 'has a "*" a grant cannot have: write one host (pypi.org) or "*." and a host (*.npmjs.org)'),
        ("pypi*.org", 'has a "*" a grant cannot have: write one host (pypi.org) or "*." and a host (*.npmjs.org)'),
        ("*.10.0.0.1", 'puts "*." before an IP address: grant the address alone'),
        ("bücher.de", "is not ASCII: write it as xn--bcher-kva.de"),
        ("py pi.org", "has spaces: write the host alone (pypi.org)"),
        ("", "is not a host: it is empty"),
        ("*.", "is not a host: it is empty"),
        ("a..b", "is not a host: it has an empty label (two dots in a row, or a dot at the start)"),
        (
            "my_host.example",
            "is not a host: it has a character a host name cannot have (letters, digits, '-' and '.' only)",
        ),
        (
            "127.1",
            "is not a host: it ends in a number but is no IP address (write the address as four numbers, 10.0.0.1)",
        ),
    ],
)
def test_a_pattern_that_is_no_host_says_what_to_write(written: str, words: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_pattern(written)
    assert str(raised.value) == words


def test_an_ip_pattern_matches_that_address_only() -> None:
    assert host_matches(parse_host("[::1]"), [parse_pattern("::1")])
    assert host_matches(parse_host("10.0.0.1"), [parse_pattern("10.0.0.1")])
    assert not host_matches(parse_host("10.0.0.2"), [parse_pattern("10.0.0.1")])
