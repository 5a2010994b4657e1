"""The wording of every way a model's service can fail, for both built-in providers.

Owns `Endpoint` (where a provider sends its requests, and the names its error lines use)
and the error each failure becomes: an HTTP status that is not a success (its body's
message cut to a line, with a hint naming what to check), a stream that breaks the API's
format, a failure the API reports mid-answer, an answer that broke off. Each is a
ProviderError whose line names the provider and what failed, and whose hint names the
environment variable to check or what to do; a failure the service calls momentary is a
`_retry.Transient`. It does not make requests, read streams or map httpx's exceptions
(`_http` does, and says a transport's failure there), and it does not retry (`_retry`).
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from ..kernel.errors import ProviderError
from ._retry import RETRY_STATUSES, Transient, retry_after

__all__ = ["Endpoint", "broke_off", "failed_mid_answer", "malformed", "one_line", "status_error"]

_DETAIL_LIMIT = 200
"""An API's error message is cut to this many characters so the line stays a line."""


class Endpoint(msgspec.Struct, frozen=True):
    """Where one provider sends a request, and the names its error lines use."""

    provider: str
    url: str
    headers: dict[str, str]
    key_env: str
    base_env: str


class _ErrorDetail(msgspec.Struct):
    message: str = ""
    type: str = ""


class _ErrorBody(msgspec.Struct):
    # Both APIs answer `{"error": {"message": ..., "type": ...}}`; anything else is shown raw.
    error: _ErrorDetail | str | None = None


def one_line(text: str) -> str:
    """`text` on one line, cut to a length a line can hold."""
    line = " ".join(text.split())
    return line if len(line) <= _DETAIL_LIMIT else line[: _DETAIL_LIMIT - 1] + "…"


def _detail(content: bytes, reason: str) -> str:
    try:
        body = msgspec.json.decode(content, type=_ErrorBody)
    except (msgspec.DecodeError, RecursionError):  # RecursionError: nested too deeply to skip
        text = content.decode("utf-8", "replace").strip()
        return one_line(text) if text else reason
    match body.error:
        case _ErrorDetail(message=message) if message:
            return one_line(message)
        case str(message) if message:
            return one_line(message)
        case _:
            return reason


def _status_hint(endpoint: Endpoint, status: int) -> str:
    if status in (401, 403):
        return f"check {endpoint.key_env}"
    if status == 404:
        return f"check the model name and {endpoint.base_env}"
    if status == 429:
        return "the service is rate limiting: wait a moment and try again"
    if status == 529:
        return "the service is overloaded: try again later"
    if status >= 500:
        return "the service failed: try again later"
    return "the request was refused: check the model name and settings"


def status_error(
    endpoint: Endpoint,
    status: int,
    content: bytes,
    reason: str,
    headers: Mapping[str, str] | None = None,
) -> ProviderError:
    """The error for an HTTP answer that is not a success: a Transient one for a status
    worth another try, unless the server said `x-should-retry: false`."""
    detail = _detail(content, reason or "no reason given")
    message = f"{endpoint.provider} answered HTTP {status}: {detail}"
    hint = _status_hint(endpoint, status)
    headers = headers or {}
    words = RETRY_STATUSES.get(status, "server error" if status >= 500 else None)
    if words is None or headers.get("x-should-retry", "").lower() == "false":
        return ProviderError(message, hint)
    return Transient(message, hint, why=f"{words} ({status})", after=retry_after(headers))


def malformed(endpoint: Endpoint, what: str) -> ProviderError:
    """The error for a stream that does not follow the API's format."""
    return ProviderError(
        f"{endpoint.provider} sent a malformed stream: {one_line(what)}",
        f"check that {endpoint.base_env} points at a compatible server",
    )


def failed_mid_answer(endpoint: Endpoint, what: str, kind: str = "", transient: str = "") -> ProviderError:
    """The error for a failure the API reports inside its stream (an error event): `kind`
    is the API's name for it, and `transient` the notice's words when the API calls that
    kind momentary (then the error is a Transient one)."""
    named = f"{what} ({kind})" if kind and kind != what else what
    message = f"{endpoint.provider} failed mid-answer: {named}"
    if transient:
        return Transient(message, "try again later", why=f"{transient} ({kind})")
    return ProviderError(message, "try again later")


def broke_off(endpoint: Endpoint, what: str) -> ProviderError:
    """The error for a stream that ended before the API said the answer was whole (the
    connection closed cleanly mid-answer)."""
    return ProviderError(f"{endpoint.provider}'s answer broke off: {what}", "try again later")
