"""Host names and host patterns: what a request may name, what a grant may say (ADR-0032).

Owns three small functions over text, no I/O:
  - `parse_host`: the host of a request through the proxy, checked and made canonical, or
    ValueError (the proxy answers 400). A host is a DNS name or an IP literal, nothing else.
  - `parse_pattern`: a grant as written in `sandbox.network.allow` (an exact host name, an
    IP literal, or `*.` and a host name), made canonical, or ValueError whose text says what
    is wrong in words a settings notice can use after "<key> holds '<pattern>', which ".
  - `host_matches`: whether a canonical host is covered by any of some canonical patterns.

Decisions (ADR-0032):
  - Case does not count and one trailing dot is dropped (`PyPI.org.` is `pypi.org`).
  - Names are ASCII: a client sends an internationalized name in its IDNA form (`xn--…`), so
    a pattern is written in that form too; a pattern with other letters is an error that
    gives the ASCII form to write. No Unicode folding happens at match time.
  - A name is letters, digits and hyphens in dot-separated labels of 1–63 characters, 253 in
    all (no `_`, no empty label), and its last label is not all digits or `0x…`: the C
    resolver reads `2130706433`, `127.1` or `0x7f.1` as IP addresses, so such a "name" would
    reach an address no grant named.
  - An IP literal is a dotted quad (no leading zeros) or an IPv6 address (brackets optional
    in a pattern, required in a request's authority); its canonical form is the standard
    text without brackets. An IP pattern matches only a request naming that address; a
    name is never matched by what it resolves to.
  - `*.example.com` matches every host below `example.com` (`a.example.com`,
    `a.b.example.com`) and not `example.com` itself, nor `badexample.com`: grant both to
    reach both. `*` alone, a `*` elsewhere, `*.` and an IP address are errors.
  - A grant names a host, not a port or a URL: `pypi.org:443` and `https://pypi.org` are
    errors that say what to write instead.

It knows nothing of settings files, of the person, or of HTTP.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

__all__ = ["host_matches", "parse_host", "parse_pattern", "shown"]

_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\Z")
_NUMERIC = re.compile(r"(?:[0-9]+|0x[0-9a-f]*)\Z")
_MAX_NAME = 253
"""The longest DNS name in its text form, without the trailing dot (RFC 1035)."""


def _ip(text: str) -> str | None:
    """The canonical text of the IP address `text` (IPv6 without brackets), or None."""
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return None


def _name_problem(name: str) -> str | None:
    """Why `name` (lowercase, no trailing dot) is not a DNS host name, or None."""
    if not name:
        return "is empty"
    if len(name) > _MAX_NAME:
        return f"is longer than a host name may be ({_MAX_NAME} characters)"
    labels = name.split(".")
    if any(not label for label in labels):
        return "has an empty label (two dots in a row, or a dot at the start)"
    for label in labels:
        if not _LABEL.match(label):
            if len(label) > 63:
                return "has a label longer than 63 characters"
            if label.startswith("-") or label.endswith("-"):
                return "has a label that starts or ends with '-'"
            return "has a character a host name cannot have (letters, digits, '-' and '.' only)"
    if _NUMERIC.match(labels[-1]):
        return "ends in a number but is no IP address (write the address as four numbers, 10.0.0.1)"
    return None


def parse_host(text: str) -> str:
    """The canonical form of a request's host (a DNS name, a dotted quad, or an IPv6
    address, bracketed or not): lowercase, no trailing dot, no brackets.

    Raises:
        ValueError: `text` is no host name and no IP literal.
    """
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1]
        if ":" in inner and (address := _ip(inner)) is not None:
            return address
        raise ValueError("is no IPv6 address")
    if ":" in text and (address := _ip(text)) is not None:
        return address
    if not text.isascii():
        raise ValueError("is not ASCII (an internationalized name is sent in its xn-- form)")
    name = text.lower()
    name = name[:-1] if name.endswith(".") else name
    if _NUMERIC.match(name.rsplit(".", 1)[-1]) and (address := _ip(name)) is not None:
        return address
    problem = _name_problem(name)
    if problem is not None:
        raise ValueError(problem)
    return name


def _ascii_form(text: str) -> str | None:
    try:
        return text.encode("idna").decode("ascii")
    except UnicodeError:
        return None


def parse_pattern(text: str) -> str:
    """The canonical form of a host grant: an exact host name, an IP address, or `*.` and a
    host name.

    Raises:
        ValueError: `text` is none of these; its text completes "'<text>', which …" with
            what is wrong and what to write.
    """
    if "://" in text or "/" in text:
        return _raise("is a URL, not a host: write the host alone (pypi.org)")
    if text != text.strip() or any(c.isspace() for c in text):
        return _raise("has spaces: write the host alone (pypi.org)")
    wild = text.startswith("*.")
    body = text[2:] if wild else text
    if "*" in body or text == "*":
        return _raise('has a "*" a grant cannot have: write one host (pypi.org) or "*." and a host (*.npmjs.org)')
    try:
        host = parse_host(body)
    except ValueError as exc:
        if not body.isascii():
            ascii_form = _ascii_form(body)
            if ascii_form is not None:
                return _raise(f"is not ASCII: write it as {'*.' if wild else ''}{ascii_form}")
            return _raise("is not ASCII and has no ASCII (xn--) form")
        if body.count(":") == 1 and (port := body.rsplit(":", 1))[1].isdigit():
            return _raise(
                f"names a port: a grant names a host, and covers every port on it (write {'*.' if wild else ''}{port[0]})"
            )
        return _raise(f"is not a host: it {exc}")
    if _ip(host) is not None:
        if wild:
            return _raise('puts "*." before an IP address: grant the address alone')
        return host
    return f"*.{host}" if wild else host


def _raise(words: str) -> str:
    raise ValueError(words)


def host_matches(host: str, patterns: Iterable[str]) -> bool:
    """Whether the canonical `host` (as `parse_host` gives it) is covered by any of the
    canonical `patterns` (as `parse_pattern` gives them)."""
    for pattern in patterns:
        if pattern.startswith("*."):
            if host.endswith(pattern[1:]) and len(host) > len(pattern) - 1:
                return True
        elif host == pattern:
            return True
    return False


def shown(host: str) -> str:
    """`host` as it is written before a port: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host else host
