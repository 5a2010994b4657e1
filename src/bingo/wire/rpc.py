"""JSON-RPC 2.0 envelopes and error codes of the plugin wire.

Owns the shape of one line: a request, a notification, a success or an error response.
Params and results stay raw (`msgspec.Raw`) here so each method decodes its own typed
payload once, at the edge. It does not frame bytes or track ids (the bridge does).
"""

from typing import Final, Literal

import msgspec

from ._base import Json, Wire

__all__ = [
    "CANCELLED",
    "DEADLINE",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REFUSED",
    "Envelope",
    "ErrorObject",
    "ErrorResponse",
    "Notification",
    "Request",
    "RequestId",
    "Response",
]

PARSE_ERROR: Final = -32700
"""The line was not JSON."""
INVALID_REQUEST: Final = -32600
"""The line was JSON but not a JSON-RPC 2.0 message."""
METHOD_NOT_FOUND: Final = -32601
"""The receiver does not implement the method (a plugin without completion answers this)."""
INVALID_PARAMS: Final = -32602
"""The params did not have the method's shape."""
INTERNAL_ERROR: Final = -32603
"""The receiver failed while handling the call."""
DEADLINE: Final = -32001
"""The call's deadline passed before an answer came."""
REFUSED: Final = -32002
"""The receiver refused the call; the message says why."""
CANCELLED: Final = -32800
"""The call was cancelled."""

RequestId = int | str


class ErrorObject(Wire, frozen=True):
    """A JSON-RPC error."""

    code: int
    message: str
    data: Json = None


class Request(Wire, frozen=True, omit_defaults=False):
    """A call that wants an answer. `jsonrpc` is always sent; `params` only when given."""

    id: RequestId
    method: str
    params: Json | msgspec.UnsetType = msgspec.UNSET
    jsonrpc: Literal["2.0"] = "2.0"


class Notification(Wire, frozen=True, omit_defaults=False):
    """A message that wants no answer. `jsonrpc` is always sent; `params` only when given."""

    method: str
    params: Json | msgspec.UnsetType = msgspec.UNSET
    jsonrpc: Literal["2.0"] = "2.0"


class Response(Wire, frozen=True, omit_defaults=False):
    """A successful answer."""

    id: RequestId
    result: Json
    jsonrpc: Literal["2.0"] = "2.0"


class ErrorResponse(Wire, frozen=True, omit_defaults=False):
    """A failed answer. `id` is null when the request could not be read."""

    id: RequestId | None
    error: ErrorObject
    jsonrpc: Literal["2.0"] = "2.0"


class Envelope(msgspec.Struct, frozen=True, kw_only=True):
    """Any one incoming line, before it is told apart: which fields are present says which
    message it is. `params` and `result` stay raw until the method's own type decodes them."""

    jsonrpc: str | msgspec.UnsetType = msgspec.UNSET
    id: RequestId | None | msgspec.UnsetType = msgspec.UNSET
    method: str | msgspec.UnsetType = msgspec.UNSET
    params: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    result: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    error: ErrorObject | msgspec.UnsetType = msgspec.UNSET
