"""Fuzzing the bridge's edges with hypothesis (issue 5, part 2): the JSON-RPC line decoder
(framing and the envelope's classification), the handshake validator, and every answer
validator. Whatever a plugin sends becomes a value, a BadLine, or a PluginError (a
msgspec.DecodeError for the handshake, which the host catches there): nothing else escapes.

The example counts add up to more than 10 000 inputs; each is counted in the suite's summary.
Deterministic (`derandomize`), no deadline (a loaded CI machine is slow, not wrong).
"""

from __future__ import annotations

import asyncio
import json

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bingo.bridge._framing import BadLine, LineReader
from bingo.bridge.handshake import read_handshake
from bingo.bridge.connection import BadAnswer, _envelope_decoder, _is_envelope, decode_answer
from bingo.kernel.errors import PluginError
from bingo.wire import InitializeResult
from bingo.wire.protocol import METHODS
from bingo.wire.rpc import Envelope
from tests.support import summary

_FUZZ = settings(
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Field names and tags of the wire, so generated objects come close to real shapes.
_KEYS = [
    "jsonrpc", "id", "method", "params", "result", "error", "code", "message", "data",
    "protocol", "name", "version", "tools", "commands", "contributors", "compactors",
    "providers", "hooks", "services", "description", "inputSchema", "hint", "args", "kind",
    "instant", "family", "key", "methods", "site", "points", "models", "output", "parts",
    "type", "text", "display", "isError", "mediaType", "outcome", "view", "completions",
    "value", "pieces", "title", "priority", "compaction", "messages", "role", "content",
    "toolUseId", "input", "response", "stopReason", "usage", "inputTokens", "outputTokens",
    "columns", "rows", "items", "children", "ordered", "language",
]
_WORDS = [
    "2.0", "text", "image", "markdown", "code", "table", "list", "stack", "view", "prompt",
    "error", "none", "user", "assistant", "toolUse", "toolResult", "end", "maxTokens",
    "cancelled", "continue", "deny", "ask", "block", "redirect", "allow", "free", "tool",
    "before", "wordcount", "initialize", "tool/call", "tool/progress",
]

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(_WORDS)
    | st.text(max_size=12)
)
json_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=4),
    max_leaves=6,
)


def _dumps(value: object) -> bytes:
    return json.dumps(value).encode()


_envelopes = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", 2]) | _scalars,
        "id": st.integers(-5, 5) | st.text(max_size=4) | st.none() | json_values,
        "method": st.sampled_from(["tool/progress", "provider/delta", "service/call", "x"]) | json_values,
        "params": json_values,
        "result": json_values,
        "error": st.fixed_dictionaries({"code": st.integers(), "message": st.text()}) | json_values,
    },
)
_line = (
    _envelopes.map(_dumps)
    | json_values.map(_dumps)
    | st.binary(max_size=80)
    # a line cut short: the start of a message, as a plugin dying mid-write leaves it
    | st.tuples(_envelopes.map(_dumps), st.floats(0, 1)).map(lambda cut: cut[0][: int(len(cut[0]) * cut[1])])
)


def _read_all(data: bytes, limit: int) -> list[Envelope | BadLine]:
    async def main() -> list[Envelope | BadLine]:
        reader = asyncio.StreamReader(limit=limit)
        reader.feed_data(data)
        reader.feed_eof()
        lines = LineReader(reader, _envelope_decoder.decode)
        out: list[Envelope | BadLine] = []
        async with asyncio.timeout(5):
            while (item := await lines.read()) is not None:
                out.append(item)
        return out

    return asyncio.run(main())


@settings(_FUZZ, max_examples=300)
@given(st.lists(_line, min_size=1, max_size=12), st.sampled_from([64, 1024]))
def test_every_line_becomes_a_message_or_a_bad_line(lines: list[bytes], limit: int) -> None:
    summary.add("fuzz", "inputs: JSON-RPC lines", len(lines))
    summary.add("fuzz", "inputs fuzzed (all kinds)", len(lines))
    data = b"\n".join(lines)
    items = _read_all(data, limit)
    assert len(items) <= data.count(b"\n") + 1
    for item in items:
        if isinstance(item, Envelope):
            _is_envelope(item)  # classification never raises
        else:
            assert isinstance(item, BadLine) and item.reason



@settings(_FUZZ, max_examples=400)
@given(st.lists(_line, min_size=5, max_size=20))
def test_one_line_of_anything_decodes_or_is_refused(lines: list[bytes]) -> None:
    summary.add("fuzz", "inputs: JSON-RPC lines", len(lines))
    summary.add("fuzz", "inputs fuzzed (all kinds)", len(lines))
    for line in lines:
        try:
            envelope = _envelope_decoder.decode(line)
        except msgspec.DecodeError:
            continue
        _is_envelope(envelope)


_handshakes = (
    st.fixed_dictionaries(
        {"protocol": st.just(5) | st.integers(0, 9) | json_values, "name": st.just("zoo") | json_values},
        optional={kind: st.lists(json_values, max_size=3) for kind in
                  ("tools", "commands", "contributors", "compactors", "providers", "hooks", "services")}
        | {"version": json_values},
    ).map(_dumps)
    | json_values.map(_dumps)
    | st.binary(max_size=60)
)


@settings(_FUZZ, max_examples=300)
@given(st.lists(_handshakes, min_size=5, max_size=20))
def test_the_handshake_validator_answers_a_result_a_refusal_or_a_decode_error(raws: list[bytes]) -> None:
    summary.add("fuzz", "inputs: handshakes", len(raws))
    summary.add("fuzz", "inputs fuzzed (all kinds)", len(raws))
    for raw in raws:
        try:
            answer = read_handshake(raw, "zoo")
        except msgspec.DecodeError:
            continue  # the host catches exactly this: "did not complete its handshake"
        assert isinstance(answer, (InitializeResult, str))


_ANSWERED = sorted(name for name, info in METHODS.items() if info.result is not None)


@settings(_FUZZ, max_examples=700)
@given(st.lists(st.tuples(st.sampled_from(_ANSWERED), json_values.map(_dumps) | st.binary(max_size=40)), min_size=5, max_size=20))
def test_every_answer_validator_answers_a_value_or_a_plugin_error(answers: list[tuple[str, bytes]]) -> None:
    summary.add("fuzz", "inputs: answers", len(answers))
    summary.add("fuzz", "inputs fuzzed (all kinds)", len(answers))
    for method, raw in answers:
        result = METHODS[method].result
        assert result is not None
        try:
            value = decode_answer("plugin zoo", method, raw, result)
        except BadAnswer as exc:
            assert isinstance(exc, PluginError) and exc.code == -32602
            continue
        assert isinstance(value, result)
