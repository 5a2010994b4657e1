"""HTTP/1.x as the proxy reads and writes it: heads, targets, framing, one-line answers.

Owns parsing a request or response head (strictly: CRLF lines, no folding, no bare CR, LF or
NUL in a header), reading a request's target (absolute form `http://host[:port]/path`, or
CONNECT's `host:port`), the headers a hop passes on (hop-by-hop ones dropped), a body's
framing (`Content-Length`, chunked), and the one-line answers the proxy gives (`Reply`).
No I/O: the proxy (`_proxy.py`) and its sockets (`_peer.py`) do that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._pattern import parse_host, shown

__all__ = [
    "CHUNK_SIZE",
    "STATUS",
    "TOKEN",
    "VERSION",
    "Broken",
    "Head",
    "Reply",
    "chunked",
    "content_length",
    "forwarded",
    "parse_head",
    "reply_bytes",
    "serialize",
    "target",
]

TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
VERSION = re.compile(rb"HTTP/1\.[01]\Z")
STATUS = re.compile(rb"(HTTP/1\.[01]) ([0-9]{3})(?: .*)?\Z")
CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]{1,16})(?:[ \t]*;.*)?\Z")
_HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-connection",
        b"proxy-authorization",
        b"proxy-authenticate",
        b"te",
        b"upgrade",
        b"trailer",
    }
)
"""Headers that concern one connection (RFC 9110 §7.6.1), dropped both ways. `Trailer` only
announces trailers, which are passed on as they come."""
_REASONS = {
    400: "Bad Request",
    403: "Forbidden",
    408: "Request Timeout",
    431: "Request Header Fields Too Large",
    501: "Not Implemented",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
    505: "HTTP Version Not Supported",
}


class Reply(Exception):
    """Answer the client `status` with `line` and close (before anything else was sent)."""

    def __init__(self, status: int, line: str, *, reason: bool = False) -> None:
        super().__init__(line)
        self.status = status
        self.line = line
        self.reason = reason
        """The line is the reason phrase too (a refusal: clients show the phrase of a
        refused CONNECT and not its body)."""


class Broken(Exception):
    """The exchange ended early (a peer went away or broke the framing): close both sides."""


@dataclass(frozen=True, slots=True)
class Head:
    """A parsed request or response head: its first line and its headers."""

    first: bytes
    headers: list[tuple[bytes, bytes]]

    def values(self, name: bytes) -> list[bytes]:
        return [value for key, value in self.headers if key.lower() == name]


def parse_head(raw: bytes) -> Head | None:
    """Split a head (ending in CRLF CRLF) into its first line and headers; None when it is
    malformed (a line without a colon, folding, a bare CR or LF, a NUL)."""
    lines = raw[:-4].split(b"\r\n")
    headers: list[tuple[bytes, bytes]] = []
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not TOKEN.match(name) or any(c in value for c in b"\r\n\0"):
            return None
        headers.append((name, value.strip(b" \t")))
    if any(c in lines[0] for c in b"\r\n\0"):
        return None
    return Head(lines[0], headers)


def forwarded(head: Head) -> list[tuple[bytes, bytes]]:
    """The headers a hop passes on: hop-by-hop ones, and what `Connection` names, dropped."""
    named = {token.strip().lower() for value in head.values(b"connection") for token in value.split(b",")}
    return [(k, v) for k, v in head.headers if k.lower() not in _HOP_BY_HOP and k.lower() not in named]


def serialize(first: bytes, headers: list[tuple[bytes, bytes]]) -> bytes:
    return b"".join([first, b"\r\n", *(k + b": " + v + b"\r\n" for k, v in headers), b"Connection: close\r\n\r\n"])


def reply_bytes(status: int, line: str, *, reason: bool) -> bytes:
    body = (line + "\n").encode("utf-8")
    phrase = _REASONS.get(status, "Error")
    if reason and line.isascii() and line.isprintable():
        phrase = line
    return (
        f"HTTP/1.1 {status} {phrase}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode("latin-1") + body


def _authority(text: str, default: int | None) -> tuple[str, int]:
    """(host, port) of `host[:port]` or `[v6][:port]`, the host canonical.

    Raises:
        Reply: 400, no host, a port out of range, or a host that is no name or IP literal.
    """
    if text.startswith("["):
        end = text.find("]")
        host_text, rest = text[: end + 1], text[end + 1 :]
        if end < 0 or (rest and not rest.startswith(":")):
            raise Reply(400, "bingo's proxy could not read the host")
        port_text = rest[1:] if rest else None
    elif ":" in text:
        host_text, _, port_text = text.rpartition(":")
    else:
        host_text, port_text = text, None
    if port_text is None:
        if default is None:
            raise Reply(400, "bingo's proxy needs a port after the host (CONNECT host:port)")
        port = default
    elif port_text.isascii() and port_text.isdigit() and len(port_text) <= 5 and 0 < int(port_text) < 65536:
        port = int(port_text)
    else:
        raise Reply(400, "bingo's proxy could not read the port (1 to 65535)")
    try:
        return parse_host(host_text), port
    except ValueError:
        raise Reply(400, "bingo's proxy takes a host name or an IP address, and the host given is neither") from None


def target(method: bytes, target: bytes) -> tuple[str, int, bytes, bytes]:
    """(host, port, the origin-form target, the Host header) of a request's target.

    Raises:
        Reply: 400 or 501, a target that is not `http://host[:port][/path]` (or, for
            CONNECT, `host:port`).
    """
    if not target.isascii() or any(c <= 0x20 or c == 0x7F for c in target):
        raise Reply(400, "bingo's proxy could not read the request target")
    text = target.decode("ascii")
    if method == b"CONNECT":
        host, port = _authority(text, None)
        return host, port, b"", b""
    scheme, sep, rest = text.partition("://")
    if not sep:
        raise Reply(400, "bingo's proxy takes requests in absolute form (GET http://host/path) and CONNECT host:port")
    if scheme.lower() != "http":
        raise Reply(
            501,
            f"bingo's proxy fetches http:// URLs itself; for {scheme[:16]}:// use CONNECT (an HTTPS proxy client does)",
        )
    cut = min((i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    authority, path = rest[:cut], rest[cut:].partition("#")[0]
    if "@" in authority:
        raise Reply(400, "bingo's proxy does not pass credentials in the URL (user@host)")
    host, port = _authority(authority, 80)
    if not path.startswith("/"):
        path = "/" + path
    host_header = shown(host) if port == 80 else f"{shown(host)}:{port}"
    return host, port, path.encode("ascii"), host_header.encode("ascii")


def content_length(head: Head) -> int | None:
    """The body's length by `Content-Length`, None without one.

    Raises:
        Reply: 400, lengths that are not one non-negative number.
    """
    values = {v.strip() for value in head.values(b"content-length") for v in value.split(b",")}
    if not values:
        return None
    if len(values) != 1 or not (one := values.pop()).isdigit() or len(one) > 18:
        raise Reply(400, "bingo's proxy could not read the Content-Length")
    return int(one)


def chunked(head: Head) -> bool | None:
    """True: the last transfer coding is chunked; False: there is none; None: another."""
    codings = [c.strip().lower() for value in head.values(b"transfer-encoding") for c in value.split(b",") if c.strip()]
    if not codings:
        return False
    return True if codings[-1] == b"chunked" else None
