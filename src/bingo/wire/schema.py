"""Generation of `schema/plugin.json`, the document a plugin author in any language writes
against. It is generated from the wire types themselves, so it cannot disagree with them.

Run `python -m bingo.wire.schema` to rewrite it; a test fails when the committed file is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from . import rpc
from .protocol import (
    HOST_SERVICE_KEY,
    METHODS,
    NOTIFICATIONS,
    PROTOCOL_VERSION,
    AskParams,
    AskResult,
    EmptyResult,
    HostNoticeParams,
)
from .rpc import ErrorResponse, Notification, Request, Response

__all__ = ["generate", "render"]

_ERROR_CODES = {
    name: getattr(rpc, name)
    for name in (
        "PARSE_ERROR",
        "INVALID_REQUEST",
        "METHOD_NOT_FOUND",
        "INVALID_PARAMS",
        "INTERNAL_ERROR",
        "DEADLINE",
        "REFUSED",
        "CANCELLED",
    )
}
_ERROR_MEANING = {
    "PARSE_ERROR": "the line was not JSON",
    "INVALID_REQUEST": "the line was JSON but not a JSON-RPC 2.0 message",
    "METHOD_NOT_FOUND": "the method is not implemented (a plugin without completion answers this)",
    "INVALID_PARAMS": "the params did not have the method's shape",
    "INTERNAL_ERROR": "the receiver failed while handling the call",
    "DEADLINE": "the call's deadline passed",
    "REFUSED": "refused; the message says why",
    "CANCELLED": "the call was cancelled",
}


def generate() -> dict[str, Any]:
    """The whole schema document as a JSON value."""
    types: list[Any] = [Request, Notification, Response, ErrorResponse]
    for info in (*METHODS.values(), *NOTIFICATIONS.values()):
        types.append(info.params)
        if info.result is not None:
            types.append(info.result)
    types += [AskParams, AskResult, HostNoticeParams, EmptyResult]
    refs, defs = msgspec.json.schema_components(types, ref_template="#/$defs/{name}")
    by_type = dict(zip(types, refs))

    def method_doc(name: str, info: Any) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "direction": info.direction,
            "summary": info.summary,
            "params": by_type[info.params],
        }
        if info.result is not None:
            doc["result"] = by_type[info.result]
        return doc

    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "bingo plugin wire",
        "description": (
            "JSON-RPC 2.0, one message per line (\\n), UTF-8, on the plugin's stdin and stdout. "
            "Stdout carries messages and nothing else; diagnostics go to stderr. Unknown fields "
            "are ignored. Field names are camelCase."
        ),
        "protocol": PROTOCOL_VERSION,
        "envelopes": {
            "request": by_type[Request],
            "notification": by_type[Notification],
            "response": by_type[Response],
            "errorResponse": by_type[ErrorResponse],
        },
        "methods": {name: method_doc(name, info) for name, info in METHODS.items()},
        "notifications": {name: method_doc(name, info) for name, info in NOTIFICATIONS.items()},
        "hostServices": {
            HOST_SERVICE_KEY: {
                "ask": {"params": by_type[AskParams], "result": by_type[AskResult]},
                "notice": {"params": by_type[HostNoticeParams], "result": by_type[EmptyResult]},
            }
        },
        "errors": {name: {"code": code, "meaning": _ERROR_MEANING[name]} for name, code in _ERROR_CODES.items()},
        "$defs": defs,
    }


def render() -> str:
    """The schema document as the committed file's text."""
    return json.dumps(generate(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main() -> None:
    """Rewrite `schema/plugin.json` (or the path given) from the wire types."""
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("schema/plugin.json")
    target.write_text(render(), encoding="utf-8")


if __name__ == "__main__":
    main()
