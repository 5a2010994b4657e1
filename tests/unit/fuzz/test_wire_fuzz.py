"""Fuzzing the bridge's edges with hypothesis (issue 5, part 2): the JSON-RPC line decoder
(framing and the envelope's classification), the handshake validator, and every answer
validator. Whatever a plugin sends becomes a value, a BadLine, or a PluginError (a
msgspec.DecodeError for the handshake, which the host catches there): nothing else escapes.
Hostile lines too (issue 12): nesting up to 100 000 deep anywhere in a message, control
characters in every string, keys of up to a megabyte, read by the connection itself, whose
read loop must outlive them all and whose calls end in a value or a bad answer.

The example counts add up to more than 10 000 inputs; each is counted in the suite's summary.
Deterministic (`derandomize`), no deadline (a loaded CI machine is slow, not wrong).
"""

from __future__ import annotations

import asyncio
import json

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bingo.bridge.handshake import read_handshake
from bingo.endpoint._framing import BadLine, LineReader, memory_pair
from bingo.endpoint._message import TOO_DEEP, BadAnswer, decode_answer, envelope_decoder, is_envelope, read_deep
from bingo.endpoint.connection import Connection
from bingo.kernel.errors import PluginError
from bingo.wire import (
    MAX_DEPTH,
    EmptyResult,
    HostNoticeParams,
    InitializeResult,
    ToolCallParams,
    ToolCallResult,
    too_deep,
)
from bingo.wire.protocol import METHODS
from bingo.wire.rpc import Envelope
from tests.support import summary
from tests.support.examples import examples

_FUZZ = settings(
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Field names and tags of the wire, so generated objects come close to real shapes.
_KEYS = [
    "jsonrpc",
    "id",
    "method",
    "params",
    "result",
    "error",
    "code",
    "message",
    "data",
    "protocol",
    "name",
    "version",
    "tools",
    "commands",
    "contributors",
    "compactors",
    "providers",
    "hooks",
    "services",
    "description",
    "inputSchema",
    "hint",
    "args",
    "kind",
    "instant",
    "family",
    "key",
    "methods",
    "site",
    "points",
    "models",
    "output",
    "parts",
    "type",
    "text",
    "display",
    "isError",
    "mediaType",
    "outcome",
    "view",
    "completions",
    "value",
    "pieces",
    "title",
    "priority",
    "compaction",
    "messages",
    "role",
    "content",
    "toolUseId",
    "input",
    "response",
    "stopReason",
    "usage",
    "inputTokens",
    "outputTokens",
    "columns",
    "rows",
    "items",
    "children",
    "ordered",
    "language",
]
_WORDS = [
    "2.0",
    "text",
    "image",
    "markdown",
    "code",
    "table",
    "list",
    "stack",
    "view",
    "prompt",
    "error",
    "none",
    "user",
    "assistant",
    "toolUse",
    "toolResult",
    "end",
    "maxTokens",
    "cancelled",
    "continue",
    "deny",
    "ask",
    "block",
    "redirect",
    "allow",
    "free",
    "tool",
    "before",
    "wordcount",
    "initialize",
    "tool/call",
    "tool/progress",
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
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=4),
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


def _is_message(line: bytes) -> bool:
    """What `is_envelope` must say of a line msgspec read as an Envelope, worked out from the
    JSON alone (the stdlib's reading of it): a method, or an id with a result or an error, and
    no `jsonrpc` other than "2.0"."""
    value = json.loads(line)
    assert isinstance(value, dict)
    if value.get("jsonrpc", "2.0") != "2.0":
        return False
    return "method" in value or ("id" in value and ("result" in value or "error" in value))


def _expected(data: bytes, limit: int) -> list[bool | None]:
    """What reading `data` must give, one entry per item: None for a BadLine, else what the
    Envelope's classification must be. A piece longer than the reader's limit is one bad line,
    a blank one nothing; any other is an Envelope when msgspec reads it as one."""
    out: list[bool | None] = []
    for piece in data.split(b"\n"):
        if len(piece) > limit:
            out.append(None)
        elif piece.strip():
            try:
                envelope_decoder.decode(piece)
            except msgspec.DecodeError:
                out.append(None)
                continue
            out.append(_is_message(piece))
    return out


def _read_all(data: bytes, limit: int) -> list[Envelope | BadLine]:
    async def main() -> list[Envelope | BadLine]:
        reader = asyncio.StreamReader(limit=limit)
        reader.feed_data(data)
        reader.feed_eof()
        lines = LineReader(reader, envelope_decoder.decode)
        out: list[Envelope | BadLine] = []
        async with asyncio.timeout(5):
            while (item := await lines.read()) is not None:
                out.append(item)
        return out

    return asyncio.run(main())


@settings(_FUZZ, max_examples=examples(300))
@given(st.lists(_line, min_size=1, max_size=12), st.sampled_from([64, 1024]))
def test_every_line_becomes_a_message_or_a_bad_line(lines: list[bytes], limit: int) -> None:
    summary.add("fuzz", "inputs: JSON-RPC lines", len(lines))
    summary.add("fuzz", "inputs fuzzed (all kinds)", len(lines))
    data = b"\n".join(lines)
    items = _read_all(data, limit)
    for item in items:
        assert isinstance(item, Envelope) or item.reason
    assert [is_envelope(item) if isinstance(item, Envelope) else None for item in items] == _expected(data, limit)


@settings(_FUZZ, max_examples=examples(400))
@given(st.lists(_line, min_size=5, max_size=20))
def test_one_line_of_anything_decodes_or_is_refused(lines: list[bytes]) -> None:
    summary.add("fuzz", "inputs: JSON-RPC lines", len(lines))
    summary.add("fuzz", "inputs fuzzed (all kinds)", len(lines))
    for line in lines:
        try:
            envelope = envelope_decoder.decode(line)
        except msgspec.DecodeError:
            continue
        assert is_envelope(envelope) is _is_message(line)


_handshakes = (
    st.fixed_dictionaries(
        {"protocol": st.just(5) | st.integers(0, 9) | json_values, "name": st.just("zoo") | json_values},
        optional={
            kind: st.lists(json_values, max_size=3)
            for kind in ("tools", "commands", "contributors", "compactors", "providers", "hooks", "services")
        }
        | {"version": json_values},
    ).map(_dumps)
    | json_values.map(_dumps)
    | st.binary(max_size=60)
)


@settings(_FUZZ, max_examples=examples(300))
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


@settings(_FUZZ, max_examples=examples(700))
@given(
    st.lists(
        st.tuples(st.sampled_from(_ANSWERED), json_values.map(_dumps) | st.binary(max_size=40)), min_size=5, max_size=20
    )
)
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


# --- hostile lines (issue 12): deep nesting, control characters, huge keys ----------------

_controls = st.text(st.characters(categories=["Cc", "Cf", "Zl", "Zp"]), max_size=8)
"""C0 and C1 controls, ESC and BEL among them, format characters (bidi overrides), separators."""
_huge_keys = st.integers(0, 1_000_000).map(lambda n: "k" * n) | st.text(max_size=3).map(lambda t: t * 50_000)


@st.composite
def _nesting(draw: st.DrawFn) -> bytes:
    """A value nested 1 to 100 000 deep, of arrays, objects or both, closed or cut short."""
    depth = draw(st.integers(1, 100_000) | st.sampled_from([MAX_DEPTH, MAX_DEPTH + 1, 1_000]))
    shape = draw(st.sampled_from(["[", '{"a":', '[{"k":', '{"x":[']))
    closing = {"[": "]", '{"a":': "}", '[{"k":': "}]", '{"x":[': "]}"}[shape]
    leaf = draw(st.sampled_from(["1", '"x"', "null", "{}", "[]"]))
    text = shape * depth + leaf + closing * depth
    if draw(st.booleans()):
        text = text[: draw(st.integers(1, len(text)))]
    return text.encode()


def _member(key: str, value: bytes) -> bytes:
    return json.dumps(key).encode() + b":" + value


_ID = 4242424242
"""The id a hostile line answers; the connection test puts the pending call's id in its place."""


@st.composite
def _hostile_lines(draw: st.DrawFn) -> tuple[str, bytes]:
    """A line as a plugin gone wrong writes it, and where its fault is: a deep value bare or in
    a member of a message (an answer's result or error or the error's data, a notification's
    or a request's params, a member nobody reads), control characters in its strings and
    keys, or a key of up to a megabyte."""
    where = draw(
        st.sampled_from(["bare", "result", "params", "request", "error", "data", "unknown", "key", "controls"])
    )
    deep = draw(_nesting())
    members = [_member("jsonrpc", b'"2.0"'), _member("id", b"%d" % _ID)]
    match where:
        case "bare":
            return where, deep
        case "result":
            members.append(_member("result", deep))
        case "params":
            members = [_member("jsonrpc", b'"2.0"'), _member("method", b'"tool/progress"'), _member("params", deep)]
        case "request":
            members = [_member("id", b'"p1"'), _member("method", b'"service/call"'), _member("params", deep)]
        case "error":
            members.append(_member("error", deep))
        case "data":
            error = b'{"code":-32002,"message":' + json.dumps(draw(_controls)).encode() + b',"data":' + deep + b"}"
            members.append(_member("error", error))
        case "unknown":
            members += [_member(draw(_controls), deep), _member("result", b'{"output":{"parts":[]}}')]
        case "key":
            members += [_member(draw(_huge_keys), b"1"), _member("result", b'{"output":{"parts":[]}}')]
        case _:
            text = json.dumps({"text": draw(_controls) * 1_000})
            members.append(_member("result", b'{"output":{"parts":[{"type":"text","text":' + text.encode() + b"}]}}"))
            members.append(_member(draw(_controls), json.dumps(draw(_controls)).encode()))
    return where, b"{" + b",".join(draw(st.permutations(members))) + b"}"


async def _items(read: LineReader[Envelope]) -> list[Envelope | BadLine]:
    items: list[Envelope | BadLine] = []
    async with asyncio.timeout(5):
        while (item := await read.read()) is not None:
            items.append(item)
    return items


@settings(_FUZZ, max_examples=examples(200))
@given(st.lists(_hostile_lines(), min_size=1, max_size=4))
def test_a_hostile_line_becomes_a_message_or_a_bad_line_and_what_it_carries_is_refused(
    lines: list[tuple[str, bytes]],
) -> None:
    summary.add("fuzz", "inputs: hostile lines (deep, controls, huge keys)", len(lines))
    summary.add("fuzz", "inputs fuzzed (all kinds)", len(lines))

    async def main() -> list[Envelope | BadLine]:
        reader = asyncio.StreamReader(limit=1 << 24)
        reader.feed_data(b"".join(line + b"\n" for _, line in lines))
        reader.feed_eof()
        return await _items(LineReader(reader, envelope_decoder.decode, read_deep))

    items = asyncio.run(main())
    assert len(items) == len(lines)
    for (where, _), item in zip(lines, items, strict=True):
        if isinstance(item, BadLine):
            assert item.reason
            continue
        # Only a bare value is never a message; the rest were built as one.
        assert is_envelope(item) is (where != "bare")
        for raw in (item.params, item.result):
            if isinstance(raw, msgspec.UnsetType):
                continue
            # What a message carries on is refused by identity, or within the limit.
            assert raw is TOO_DEEP or not too_deep(bytes(raw))
            try:
                assert isinstance(decode_answer("plugin zoo", "tool/call", raw, ToolCallResult), ToolCallResult)
            except BadAnswer as exc:
                assert exc.code == -32602


def _tool_call() -> ToolCallParams:
    return ToolCallParams(call_id="c", name="poke", input={}, cwd="/", session="s", turn=1)


@settings(_FUZZ, max_examples=examples(60))
@given(st.lists(_hostile_lines(), min_size=1, max_size=3))
def test_the_connection_outlives_hostile_lines_and_each_call_ends_in_a_value_or_an_error(
    lines: list[tuple[str, bytes]],
) -> None:
    summary.add("fuzz", "inputs: hostile lines through a connection", len(lines))
    summary.add("fuzz", "inputs fuzzed (all kinds)", len(lines))
    strays: list[BadLine] = []
    requests_refused: list[int] = []

    async def handle(params: HostNoticeParams) -> EmptyResult:
        raise AssertionError(f"a hostile request reached its handler: {params}")

    async def main() -> None:
        (host_reader, host_writer), (peer_reader, peer_writer) = memory_pair()
        conn = Connection(host_reader, host_writer, name="plugin zoo", on_stray=strays.append)
        conn.on_request("service/call", HostNoticeParams, handle)
        conn.on_notification("tool/progress", HostNoticeParams, lambda params: None)

        async def next_request() -> int:
            # Answers to the hostile requests (`p1`) may come first: each is a refusal.
            while True:
                message = json.loads(await peer_reader.readline())
                if message.get("method") == "tool/call":
                    return int(message["id"])
                assert message["id"] == "p1" and message["error"]["code"] == -32602
                requests_refused.append(1)

        async with asyncio.timeout(10), conn:
            for _, line in [*lines, ("sentinel", b"")]:
                call = asyncio.create_task(conn.call("tool/call", _tool_call(), ToolCallResult, deadline=5))
                request_id = await next_request()
                if line:
                    peer_writer.write(line.replace(b'"id":%d' % _ID, b'"id":%d' % request_id) + b"\n")
                peer_writer.write(b'{"jsonrpc":"2.0","id":%d,"result":{"output":{"parts":[]}}}\n' % request_id)
                try:
                    assert isinstance(await call, ToolCallResult)
                except PluginError as exc:  # a bad answer, or the error the line answered
                    assert exc.code in (-32602, -32002)
                assert conn.ended is None

    asyncio.run(main())
    assert all(bad.reason for bad in strays)
    assert len(requests_refused) <= sum(where == "request" for where, _ in lines)
