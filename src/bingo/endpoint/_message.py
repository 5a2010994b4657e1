"""What crosses one connection, as values: the decoder for each params or result type, the
one answer validator (`decode_answer`), the one function from an exception to a wire error
(`error_object`) and the one from a wire error a peer answered to an exception
(`answered_error`), and the reading of a line nested deeper than `wire.MAX_DEPTH` at its top
level (`read_deep`), so an answer too deep fails its one call and a request whose params are
too deep is refused. It holds no state and does no I/O: the connection (connection.py) does.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any, TypeVar

import msgspec

from ..kernel.errors import (
    BadParams,
    BingoError,
    Cancelled,
    DeadlinePassed,
    MethodNotFound,
    PluginError,
    Refused,
)
from ..wire import MAX_DEPTH, too_deep, top_members
from ..wire.rpc import INTERNAL_ERROR, INVALID_PARAMS, REFUSED, Envelope, ErrorObject

__all__ = [
    "NESTED",
    "TOO_DEEP",
    "BadAnswer",
    "TooLarge",
    "answered_error",
    "answered_id",
    "decode_answer",
    "decoder_for",
    "envelope_decoder",
    "error_object",
    "is_envelope",
    "read_deep",
]

_log = logging.getLogger("bingo.endpoint.connection")

R = TypeVar("R")

envelope_decoder = msgspec.json.Decoder(Envelope)
TOO_DEEP = msgspec.Raw(b"null")
"""Stands for params or a result nested deeper than MAX_DEPTH, read from a line too deep to
decode whole (`read_deep`): the answer validator and the incoming handlers refuse it by
identity, so no line that was not deep pays for a second look."""
NESTED = f"nested too deeply (more than {MAX_DEPTH} levels)"
_decoders: dict[type[Any], msgspec.json.Decoder[Any]] = {}


def decoder_for(kind: type[R]) -> msgspec.json.Decoder[R]:
    """The one decoder for a params or result type, built the first time it is needed."""
    decoder = _decoders.get(kind)
    if decoder is None:
        decoder = _decoders[kind] = msgspec.json.Decoder(kind)
    return decoder


class BadAnswer(PluginError):
    """The peer answered a call, but not in the shape of the method's result."""

    code = INVALID_PARAMS


class TooLarge(BadAnswer):
    """The peer's answer was longer than the longest line bingo keeps: it was thrown away
    unread, and its call failed at once (ADR-0028)."""


_ID = rb'(-?\d{1,18}|"[^"\\]{0,200}")'
_ANSWER_FIRST = re.compile(
    rb'\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*' + _ID + rb'\s*,\s*"(?:result|error)"'
)
"""An answer whose id comes first (`{"jsonrpc":"2.0","id":7,"result":...`, Python's order)."""
_ANSWER_OPENS = re.compile(rb'\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"(?:result|error)"\s*:')
_ID_LAST = re.compile(rb'"id"\s*:\s*' + _ID + rb"\s*\}\s*$")
"""An answer whose id comes last (`{"result":...,"jsonrpc":"2.0","id":7}`, the TypeScript
SDK's order): the last member before the closing brace is the top level's."""


def answered_id(head: bytes, tail: bytes) -> int | str | None:
    """The id of the call a line answers, read from its first and last bytes alone (a line
    too long to keep), or None when they do not show one. A request of the peer's own (its
    `method` before any result) is no answer: its id is of the peer's numbering."""
    found = _ANSWER_FIRST.match(head)
    if found is None and _ANSWER_OPENS.match(head):
        found = _ID_LAST.search(tail)
    if found is None:
        return None
    token = found.group(1)
    return token[1:-1].decode("utf-8", "replace") if token.startswith(b'"') else int(token)


def decode_answer(peer: str, method: str, raw: msgspec.Raw | bytes, result: type[R]) -> R:
    """An answer's `result`, decoded as `method`'s result type: the one answer validator.

    Raises:
        BadAnswer: it is not JSON of that shape.
    """
    if raw is TOO_DEEP:
        raise BadAnswer(
            f"{peer} answered {method} with a result {NESTED}",
            "see schema/plugin.json for the answer's shape",
        )
    try:
        return decoder_for(result).decode(raw)
    except msgspec.DecodeError as exc:
        raise BadAnswer(
            f"{peer} answered {method} in the wrong shape: {exc}",
            "see schema/plugin.json for the answer's shape",
        ) from exc


def error_object(exc: BaseException) -> ErrorObject:
    """The wire error for an exception raised while handling an incoming request: a
    PluginError with a code crosses as it (its class's: DeadlinePassed, Refused, ...), another
    BingoError is a refusal in its own words, and anything else is an internal error with a
    short text (and a logged traceback)."""
    if isinstance(exc, PluginError) and exc.code:
        return ErrorObject(code=exc.code, message=exc.line())
    if isinstance(exc, BingoError):
        return ErrorObject(code=REFUSED, message=exc.line())
    _log.exception("handler failed", exc_info=exc)
    return ErrorObject(code=INTERNAL_ERROR, message=f"internal error in the host: {type(exc).__name__}")


_ANSWERED: dict[int, type[PluginError]] = {
    kind.code: kind for kind in (DeadlinePassed, Refused, Cancelled, MethodNotFound, BadParams)
}
"""The way of failing each wire code a peer may answer stands for."""


def answered_error(peer: str, error: ErrorObject) -> PluginError:
    """The exception for an error `peer` answered: the PluginError subclass of its code, or a
    PluginError keeping a code no subclass has (passed on as it is if it crosses again)."""
    message = f"{peer}: {error.message}"
    kind = _ANSWERED.get(error.code)
    return kind(message) if kind is not None else PluginError(message, code=error.code)


def _object(members: Mapping[str, bytes]) -> bytes:
    """A JSON object of `members`, whose values are JSON text already."""
    return b"{" + b",".join(msgspec.json.encode(key) + b":" + value for key, value in members.items()) + b"}"


def read_deep(line: bytes) -> Envelope | None:
    """A line nested deeper than MAX_DEPTH, read at its top level: params or a result too deep
    stand as `TOO_DEEP`, so the call it answers fails as a bad answer and a request is
    refused; an error too deep keeps its code and message, not its data; another member too
    deep is ignored, as unknown fields are. None when not even that can be read (the line is
    then a bad line); msgspec.DecodeError when what is read is not a message.
    """
    members = top_members(line)
    if members is None:
        return None
    shallow = {key: value for key, value in members.items() if not too_deep(value)}
    deep = members.keys() - shallow.keys()
    if deep & {"jsonrpc", "id", "method"}:
        return None
    error = members.get("error")
    if "error" in deep and error is not None:
        fields = top_members(error)
        if fields is None:
            return None
        kept = {key: value for key, value in fields.items() if key in ("code", "message") and not too_deep(value)}
        shallow["error"] = _object(kept)
    envelope = envelope_decoder.decode(_object(shallow))
    return msgspec.structs.replace(
        envelope,
        params=TOO_DEEP if "params" in deep else envelope.params,
        result=TOO_DEEP if "result" in deep else envelope.result,
    )


def is_envelope(env: Envelope) -> bool:
    # Lenient on a missing "jsonrpc" (some plugins omit it), strict on a wrong one.
    if not isinstance(env.jsonrpc, msgspec.UnsetType) and env.jsonrpc != "2.0":
        return False
    if not isinstance(env.method, msgspec.UnsetType):
        return True
    has_answer = not isinstance(env.result, msgspec.UnsetType) or not isinstance(env.error, msgspec.UnsetType)
    return has_answer and not isinstance(env.id, msgspec.UnsetType)
