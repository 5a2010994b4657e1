"""HTTP/1 heads as the proxy reads them (ADR-0032): whatever arrives is a parsed head, a
one-line answer, or nothing; and what goes on carries no line the client smuggled in."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bingo.sandbox._http1 import Reply, content_length, forwarded, parse_head, serialize, target
from tests.support.examples import examples

_header_bytes = st.binary(max_size=40) | st.sampled_from(
    [b"\r", b"\n", b"\r\n", b"\0", b":", b" ", b"\t", b",", b"chunked"]
)
_lines = st.lists(st.lists(_header_bytes, max_size=6).map(b"".join), max_size=8)


@settings(max_examples=examples(500), deadline=None)
@given(st.binary(max_size=60), _lines)
def test_a_head_passed_on_has_only_whole_header_lines(first: bytes, lines: list[bytes]) -> None:
    raw = b"\r\n".join([first, *lines]) + b"\r\n\r\n"
    head = parse_head(raw)
    if head is None:
        return
    sent = serialize(head.first, forwarded(head))
    assert sent.endswith(b"\r\n\r\n")
    out = sent[:-4].split(b"\r\n")
    assert out[0] == head.first and b"\n" not in out[0] and b"\r" not in out[0]
    for line in out[1:]:
        name, colon, value = line.partition(b": ")
        assert colon and name and b"\r" not in value and b"\n" not in value and b"\0" not in value


_target_bytes = st.lists(
    st.sampled_from(
        [
            b"http://",
            b"HTTPS://",
            b"example.com",
            b"[::1]",
            b"10.0.0.1",
            b":",
            b"80",
            b"99999",
            b"/",
            b"?",
            b"#",
            b"@",
            b" ",
            b"\x7f",
            b"\xff",
            b"\0",
            b"\r\n",
            b".",
            b"-",
            b"%2F",
        ]
    )
    | st.binary(max_size=4),
    max_size=10,
).map(b"".join)


@settings(max_examples=examples(1000), deadline=None)
@given(st.sampled_from([b"GET", b"CONNECT", b"POST"]), _target_bytes)
def test_a_target_is_read_or_answered_in_one_line(method: bytes, raw: bytes) -> None:
    try:
        host, port, path, host_header = target(method, raw)
    except Reply as reply:
        assert reply.status in (400, 501) and "\n" not in reply.line
        return
    assert 0 < port < 65536 and host == host.lower()
    if method != b"CONNECT":
        assert path.startswith(b"/") and b"#" not in path
        assert all(0x20 < c < 0x7F for c in path)
        assert host_header.split(b":")[0].strip(b"[]") in (host.encode(), b"")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"http://Example.COM./a?b", ("example.com", 80, b"/a?b", b"example.com")),
        (b"http://example.com:8080", ("example.com", 8080, b"/", b"example.com:8080")),
        (b"http://[::1]:81/x#frag", ("::1", 81, b"/x", b"[::1]:81")),
        (b"HTTP://10.0.0.1?q", ("10.0.0.1", 80, b"/?q", b"10.0.0.1")),
    ],
)
def test_an_absolute_target_becomes_origin_form_and_a_host_header(
    raw: bytes, expected: tuple[str, int, bytes, bytes]
) -> None:
    assert target(b"GET", raw) == expected


@pytest.mark.parametrize("raw", [b"[::1]:443", b"pypi.org:443", b"10.0.0.1:22"])
def test_a_connect_target_is_host_and_port(raw: bytes) -> None:
    host, port, _, _ = target(b"CONNECT", raw)
    assert (host, port) == {
        b"[::1]:443": ("::1", 443),
        b"pypi.org:443": ("pypi.org", 443),
        b"10.0.0.1:22": ("10.0.0.1", 22),
    }[raw]


@pytest.mark.parametrize(("values", "length"), [([], None), ([b"5"], 5), ([b"5, 5"], 5), ([b"5", b"5"], 5)])
def test_repeated_equal_lengths_are_one_length(values: list[bytes], length: int | None) -> None:
    head = parse_head(b"GET / HTTP/1.1\r\n" + b"".join(b"Content-Length: " + v + b"\r\n" for v in values) + b"\r\n")
    assert head is not None and content_length(head) == length


@pytest.mark.parametrize("values", [[b"5", b"6"], [b"-1"], [b"5x"], [b"1" * 19]])
def test_lengths_that_disagree_or_are_no_number_are_400(values: list[bytes]) -> None:
    head = parse_head(b"GET / HTTP/1.1\r\n" + b"".join(b"Content-Length: " + v + b"\r\n" for v in values) + b"\r\n")
    assert head is not None
    with pytest.raises(Reply) as raised:
        content_length(head)
    assert raised.value.status == 400
