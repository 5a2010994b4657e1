"""schema/plugin.json is generated from the wire types and must never go stale."""

from __future__ import annotations

import json
from pathlib import Path

from bingo.wire.schema import generate, render

SCHEMA = Path(__file__).resolve().parents[3] / "schema" / "plugin.json"


def test_committed_schema_is_what_the_wire_types_generate() -> None:
    committed = SCHEMA.read_text(encoding="utf-8")
    assert committed == render(), "schema/plugin.json is stale: run python -m bingo.wire.schema"


def test_schema_documents_every_method_notification_and_error_code() -> None:
    doc = generate()
    assert set(doc["methods"]) == {
        "initialize",
        "tool/call",
        "command/run",
        "command/complete",
        "context/contribute",
        "compactor/compact",
        "provider/stream",
        "hook/decide",
        "service/call",
    }
    assert set(doc["notifications"]) == {
        "tool/progress",
        "tool/cancel",
        "provider/delta",
        "provider/cancel",
        "hook/observe",
    }
    codes = {entry["code"] for entry in doc["errors"].values()}
    assert codes == {-32700, -32600, -32601, -32602, -32603, -32001, -32002, -32800}
    assert set(doc["hostServices"]["bingo.host"]) == {"ask", "notice"}


def test_schema_uses_camel_case_field_names() -> None:
    defs = generate()["$defs"]
    assert "callId" in defs["ToolCallParams"]["properties"]
    assert "inputSchema" in defs["ToolSpec"]["properties"]
    assert "pluginRoot" in defs["InitializeParams"]["properties"]
    text = json.dumps(defs)
    assert "call_id" not in text and "input_schema" not in text
