"""The connection, against the in-memory twin: ids, deadlines, EOF, bad lines, handlers."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import pytest

from bingo.endpoint._framing import BadLine, MemoryWriter, memory_pair
from bingo.endpoint.connection import UNREAD_MAX, BadAnswer, Connection, Unread, answered_error, error_object
from bingo.kernel.errors import (
    BadParams,
    Cancelled,
    ConnectionClosed,
    DeadlinePassed,
    GateError,
    MethodNotFound,
    PluginError,
    Refused,
)
from bingo.wire import FALLBACK_DEADLINE, EmptyResult, HostNoticeParams, ServiceCallParams, ServiceCallResult
from bingo.wire.rpc import (
    CANCELLED,
    DEADLINE,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    REFUSED,
    ErrorObject,
)


class Peer:
    """The far end, speaking raw JSON lines."""

    def __init__(self, reader: asyncio.StreamReader, writer: MemoryWriter) -> None:
        self.reader = reader
        self.writer = writer

    async def read(self) -> dict[str, Any]:
        line = await self.reader.readline()
        assert line, "the connection closed"
        return msgspec.json.decode(line, type=dict[str, Any])

    def send(self, message: dict[str, Any] | bytes) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.writer.write(data + b"\n")


Scenario = Callable[[Connection, Peer], Awaitable[None]]


def _run(scenario: Scenario, **options: Any) -> None:
    async def main() -> None:
        (host_reader, host_writer), (peer_reader, peer_writer) = memory_pair()
        conn = Connection(host_reader, host_writer, name="plugin p", ids=itertools.count(1), **options)
        async with asyncio.timeout(5), conn:
            await scenario(conn, Peer(peer_reader, peer_writer))

    asyncio.run(main())


def _notice(message: str) -> HostNoticeParams:
    return HostNoticeParams(message=message)


def test_calls_in_flight_are_matched_by_id_whatever_the_order_of_answers() -> None:
    async def scenario(conn: Connection, peer: Peer) -> None:
        first = asyncio.create_task(
            conn.call("service/call", ServiceCallParams(key="k", method="a"), ServiceCallResult, deadline=5)
        )
        second = asyncio.create_task(
            conn.call("service/call", ServiceCallParams(key="k", method="b"), ServiceCallResult, deadline=5)
        )
        one, two = await peer.read(), await peer.read()
        assert (one["id"], two["id"]) == (1, 2)
        assert one["jsonrpc"] == "2.0"
        assert one["params"] == {"key": "k", "method": "a"}
        peer.send({"jsonrpc": "2.0", "id": 2, "result": {"result": "B"}})
        peer.send({"jsonrpc": "2.0", "id": 1, "result": {"result": "A"}})
        assert (await first).result == "A"
        assert (await second).result == "B"

    _run(scenario)


def test_a_call_past_its_deadline_fails_with_code_deadline_and_a_late_answer_is_ignored() -> None:
    async def scenario(conn: Connection, peer: Peer) -> None:
        with pytest.raises(DeadlinePassed) as caught:
            await conn.call("service/call", ServiceCallParams(key="k", method="m"), ServiceCallResult, deadline=0.01)
        assert caught.value.code == DEADLINE
        request = await peer.read()
        peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"result": 1}})
        # the connection goes on: a later call is answered normally
        later = asyncio.create_task(
            conn.call("service/call", ServiceCallParams(key="k", method="m"), ServiceCallResult, deadline=5)
        )
        again = await peer.read()
        peer.send({"jsonrpc": "2.0", "id": again["id"], "result": {"result": 2}})
        assert (await later).result == 2

    _run(scenario)


def test_eof_wakes_every_pending_caller_with_the_error_the_process_layer_builds() -> None:
    async def ended() -> ConnectionClosed:
        return ConnectionClosed("plugin p exited with code 3", "log: x.log")

    async def scenario(conn: Connection, peer: Peer) -> None:
        calls = [
            asyncio.create_task(
                conn.call("service/call", ServiceCallParams(key="k", method="m"), ServiceCallResult, deadline=5)
            )
            for _ in range(3)
        ]
        for _ in calls:
            await peer.read()
        peer.writer.close()
        for call in calls:
            with pytest.raises(PluginError, match="exited with code 3"):
                await call
        assert (await conn.wait_closed()).message == "plugin p exited with code 3"
        with pytest.raises(PluginError, match="exited with code 3"):
            await conn.call("service/call", ServiceCallParams(key="k", method="m"), ServiceCallResult, deadline=5)

    _run(scenario, on_eof=ended)


def test_a_stray_stdout_line_is_reported_and_the_connection_goes_on() -> None:
    strays: list[BadLine] = []

    async def scenario(conn: Connection, peer: Peer) -> None:
        call = asyncio.create_task(
            conn.call("service/call", ServiceCallParams(key="k", method="m"), ServiceCallResult, deadline=5)
        )
        request = await peer.read()
        peer.send(b"debug: starting up")
        peer.send({"hello": "world"})
        peer.send({"jsonrpc": "1.0", "method": "x"})
        peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"result": "ok"}})
        assert (await call).result == "ok"

    _run(scenario, on_stray=strays.append)
    assert [s.preview for s in strays] == ["debug: starting up", "", ""]


def test_a_response_for_an_unknown_id_is_ignored() -> None:
    async def scenario(conn: Connection, peer: Peer) -> None:
        peer.send({"jsonrpc": "2.0", "id": 99, "result": {"result": "?"}})
        peer.send({"jsonrpc": "2.0", "id": "x", "error": {"code": -1, "message": "?"}})
        call = asyncio.create_task(
            conn.call("service/call", ServiceCallParams(key="k", method="m"), ServiceCallResult, deadline=5)
        )
        request = await peer.read()
        peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"result": "fine"}})
        assert (await call).result == "fine"

    _run(scenario)


def test_an_error_answer_raises_plugin_error_with_its_code() -> None:
    async def scenario(conn: Connection, peer: Peer) -> None:
        call = asyncio.create_task(
            conn.call("service/call", ServiceCallParams(key="k", method="m"), ServiceCallResult, deadline=5)
        )
        request = await peer.read()
        peer.send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "nope"}})
        with pytest.raises(MethodNotFound) as caught:
            await call
        assert caught.value.code == METHOD_NOT_FOUND

    _run(scenario)


def test_a_call_takes_its_methods_deadline_from_the_settings_then_the_wire_table() -> None:
    async def scenario(conn: Connection, peer: Peer) -> None:
        assert conn.deadline("service/call") == 0.01
        assert conn.deadline("tool/call") == 600.0
        assert conn.deadline("no/such") == FALLBACK_DEADLINE
        with pytest.raises(DeadlinePassed) as caught:
            await conn.call("service/call", ServiceCallParams(key="k", method="m"), ServiceCallResult)
        assert caught.value.message == "plugin p did not answer service/call within 0.01 s"

    _run(scenario, deadlines={"service/call": 0.01})


def test_an_error_a_peer_answers_is_the_subclass_of_its_code() -> None:
    kinds = {
        DEADLINE: DeadlinePassed,
        REFUSED: Refused,
        CANCELLED: Cancelled,
        METHOD_NOT_FOUND: MethodNotFound,
        INVALID_PARAMS: BadParams,
    }
    for code, kind in kinds.items():
        error = answered_error("plugin p", ErrorObject(code=code, message="why"))
        assert type(error) is kind
        assert (error.code, error.message) == (code, "plugin p: why")
    other = answered_error("plugin p", ErrorObject(code=-32050, message="its own"))
    assert type(other) is PluginError
    assert other.code == -32050


def test_the_plugin_can_call_the_host_and_a_failing_handler_answers_an_error() -> None:
    async def notice(params: HostNoticeParams) -> EmptyResult:
        if params.message == "boom":
            raise ValueError("a bug")
        if params.message == "refuse":
            raise GateError("no person to ask")
        return EmptyResult()

    async def scenario(conn: Connection, peer: Peer) -> None:
        conn.on_request("host/notice", HostNoticeParams, notice)
        peer.send({"jsonrpc": "2.0", "id": "a", "method": "host/notice", "params": {"message": "boom"}})
        peer.send({"jsonrpc": "2.0", "id": "b", "method": "host/notice", "params": {"message": "refuse"}})
        peer.send({"jsonrpc": "2.0", "id": "c", "method": "host/notice", "params": {"message": "hi"}})
        peer.send({"jsonrpc": "2.0", "id": "d", "method": "no/such"})
        answers = {a["id"]: a for a in [await peer.read() for _ in range(4)]}
        assert answers["a"]["error"]["code"] == INTERNAL_ERROR
        assert answers["b"]["error"] == {"code": REFUSED, "message": "no person to ask"}
        assert answers["c"] == {"jsonrpc": "2.0", "id": "c", "result": {}}
        assert answers["d"]["error"]["code"] == METHOD_NOT_FOUND

    _run(scenario)


def test_the_read_loop_does_not_wait_for_a_slow_handler() -> None:
    release = asyncio.Event()

    async def slow(params: HostNoticeParams) -> EmptyResult:
        await release.wait()
        return EmptyResult()

    async def scenario(conn: Connection, peer: Peer) -> None:
        conn.on_request("slow", HostNoticeParams, slow)
        peer.send({"jsonrpc": "2.0", "id": 1, "method": "slow", "params": {"message": "x"}})
        call = asyncio.create_task(
            conn.call("service/call", ServiceCallParams(key="k", method="m"), ServiceCallResult, deadline=5)
        )
        request = await peer.read()
        peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"result": 1}})
        assert (await call).result == 1
        release.set()
        assert (await peer.read())["id"] == 1

    _run(scenario)


def test_a_failing_notification_handler_does_not_end_the_loop() -> None:
    seen: list[str] = []

    def handler(params: HostNoticeParams) -> None:
        seen.append(params.message)
        if params.message == "bad":
            raise RuntimeError("a bug")

    async def scenario(conn: Connection, peer: Peer) -> None:
        conn.on_notification("say", HostNoticeParams, handler)
        peer.send({"jsonrpc": "2.0", "method": "say", "params": {"message": "bad"}})
        peer.send({"jsonrpc": "2.0", "method": "say", "params": {"nope": 1}})
        peer.send({"jsonrpc": "2.0", "method": "say", "params": {"message": "good"}})
        call = asyncio.create_task(
            conn.call("service/call", ServiceCallParams(key="k", method="m"), ServiceCallResult, deadline=5)
        )
        request = await peer.read()
        peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"result": 1}})
        await call

    _run(scenario)
    assert seen == ["bad", "good"]


def test_cancelling_a_caller_sends_nothing_and_forgets_the_call() -> None:
    async def scenario(conn: Connection, peer: Peer) -> None:
        call = asyncio.create_task(
            conn.call("service/call", ServiceCallParams(key="k", method="m"), ServiceCallResult, deadline=5)
        )
        request = await peer.read()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        conn.notify("marker", _notice("after"))
        assert (await peer.read())["method"] == "marker"
        peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"result": 1}})

    _run(scenario)


def test_two_connections_talk_both_ways() -> None:
    async def echo(params: ServiceCallParams) -> ServiceCallResult:
        return ServiceCallResult(result=[params.method, params.params])

    async def main() -> None:
        (a_reader, a_writer), (b_reader, b_writer) = memory_pair()
        async with (
            asyncio.timeout(5),
            Connection(a_reader, a_writer, name="a") as a,
            Connection(b_reader, b_writer, name="b") as b,
        ):
            a.on_request("service/call", ServiceCallParams, echo)
            b.on_request("service/call", ServiceCallParams, echo)
            x = await a.call(
                "service/call", ServiceCallParams(key="k", method="m", params=1), ServiceCallResult, deadline=5
            )
            y = await b.call("service/call", ServiceCallParams(key="k", method="n"), ServiceCallResult, deadline=5)
        assert (x.result, y.result) == (["m", 1], ["n", None])

    asyncio.run(main())


def test_errors_map_to_one_wire_error_each() -> None:
    assert error_object(DeadlinePassed("late")).code == DEADLINE
    assert error_object(Refused("no person to ask")) == ErrorObject(code=REFUSED, message="no person to ask")
    assert error_object(MethodNotFound("no method x")).code == METHOD_NOT_FOUND
    assert error_object(BadParams("bad params")).code == INVALID_PARAMS
    assert error_object(PluginError("its own", code=-32050)).code == -32050
    assert error_object(ConnectionClosed("plugin q exited")).code == REFUSED
    assert error_object(GateError("no person to ask")).code == REFUSED
    assert error_object(KeyError("x")).code == INTERNAL_ERROR


def test_a_late_answer_to_an_expired_call_is_dropped_quietly_but_a_second_one_is_reported() -> None:
    unexpected: list[object] = []

    async def scenario(conn: Connection, peer: Peer) -> None:
        with pytest.raises(DeadlinePassed) as caught:
            await conn.call("service/call", ServiceCallParams(key="k", method="m"), ServiceCallResult, deadline=0.01)
        assert caught.value.message == "plugin p did not answer service/call within 0.01 s"
        request = await peer.read()
        peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"result": 1}})
        peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"result": 1}})
        conn.notify("marker", _notice("after"))
        assert (await peer.read())["method"] == "marker"
        call = asyncio.create_task(
            conn.call("service/call", ServiceCallParams(key="k", method="m"), ServiceCallResult, deadline=5)
        )
        again = await peer.read()
        peer.send({"jsonrpc": "2.0", "id": again["id"], "result": {"result": 2}})
        assert (await call).result == 2

    _run(scenario, on_unexpected=unexpected.append)
    assert unexpected == [1]


def test_an_answer_read_after_its_caller_was_cancelled_but_before_it_ran_again_is_dropped_quietly() -> None:
    # A run that ends mid-handshake cancels the start's task while the answer is already on
    # its way: the read loop takes the answer before the cancelled caller runs its cleanup.
    unexpected: list[object] = []

    async def scenario(conn: Connection, peer: Peer) -> None:
        call = asyncio.create_task(
            conn.call("service/call", ServiceCallParams(key="k", method="m"), ServiceCallResult, deadline=5)
        )
        request = await peer.read()
        peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"result": 1}})
        call.cancel()  # the answer is read before the caller runs again
        with pytest.raises(asyncio.CancelledError):
            await call
        conn.notify("marker", _notice("after"))
        assert (await peer.read())["method"] == "marker"

    _run(scenario, on_unexpected=unexpected.append)
    assert unexpected == []


def test_calls_through_a_real_transport_past_its_high_water_mark_all_arrive_in_order() -> None:
    # A socket pair: a real transport with flow control, so a writer that outruns the reader
    # is made to wait (drain) and nothing is lost or reordered.
    async def echo(params: ServiceCallParams) -> ServiceCallResult:
        return ServiceCallResult(result=params.method)

    async def main() -> list[object]:
        a, b = socket.socketpair()
        host_reader, host_writer = await asyncio.open_connection(sock=a, limit=1 << 24)
        peer_reader, peer_writer = await asyncio.open_connection(sock=b, limit=1 << 24)
        big = "x" * 200_000  # each request is past the 64 KiB high-water mark by itself
        async with (
            asyncio.timeout(5),
            Connection(host_reader, host_writer, name="host") as host,
            Connection(peer_reader, peer_writer, name="peer") as peer,
        ):
            peer.on_request("service/call", ServiceCallParams, echo)
            calls = [
                host.call(
                    "service/call", ServiceCallParams(key="k", method=f"{n}", params=big), ServiceCallResult, deadline=5
                )
                for n in range(20)
            ]
            answers = [answer.result for answer in await asyncio.gather(*calls)]
        host_writer.close()
        peer_writer.close()
        return answers

    assert asyncio.run(main()) == [f"{n}" for n in range(20)]


def test_a_peer_that_never_reads_ends_the_connection_past_the_unread_bound() -> None:
    # A socket pair, so the answers queue in a real transport; the peer floods requests the
    # host must answer and reads nothing. Past UNREAD_MAX the connection ends with Unread,
    # the queue is dropped and a call in flight is woken, whatever the peer goes on sending.
    async def main() -> tuple[PluginError, PluginError, int]:
        a, b = socket.socketpair()
        host_reader, host_writer = await asyncio.open_connection(sock=a, limit=1 << 24)
        _, peer_writer = await asyncio.open_connection(sock=b)
        request = b'{"jsonrpc": "2.0", "id": 1, "method": "nothing"}\n'
        async with asyncio.timeout(5), Connection(host_reader, host_writer, name="plugin deaf") as conn:
            pending = asyncio.ensure_future(
                conn.call("service/call", ServiceCallParams(key="k", method="m"), ServiceCallResult, deadline=5)
            )
            # Far more answers than the bound, however big the socket's own buffers are.
            flood = request * (4 * UNREAD_MAX // len(request))
            try:
                for start in range(0, len(flood), 1 << 16):
                    peer_writer.write(flood[start : start + (1 << 16)])
                    await peer_writer.drain()
            except ConnectionError:
                pass  # the host closed its end: the flood is over
            ended = await conn.wait_closed()
            with pytest.raises(PluginError) as woken:
                await pending
            queued = host_writer.transport.get_write_buffer_size()
        host_writer.close()
        peer_writer.close()
        return ended, woken.value, queued

    ended, woken, queued = asyncio.run(main())
    assert isinstance(ended, Unread) and woken is ended
    assert ended.message == "plugin deaf does not read its stdin: more than 4 MiB written to it is unread"
    assert queued == 0


def test_a_peer_that_reads_its_answers_is_never_taken_for_one_that_does_not() -> None:
    # Rounds of requests, each round's answers read before the next: more than UNREAD_MAX
    # is answered in all, never that much at once, and the connection stays open.
    async def echo(params: ServiceCallParams) -> ServiceCallResult:
        return ServiceCallResult(result=params.method)

    rounds, per_round, size = 12, 500, 1000
    assert rounds * per_round * size > UNREAD_MAX

    async def main() -> tuple[int, PluginError | None]:
        a, b = socket.socketpair()
        host_reader, host_writer = await asyncio.open_connection(sock=a, limit=1 << 24)
        peer_reader, peer_writer = await asyncio.open_connection(sock=b, limit=1 << 24)
        answered = 0
        async with asyncio.timeout(5), Connection(host_reader, host_writer, name="host") as host:
            host.on_request("service/call", ServiceCallParams, echo)
            for _ in range(rounds):
                for n in range(per_round):
                    params = {"key": "k", "method": "x" * size}
                    peer_writer.write(
                        json.dumps({"jsonrpc": "2.0", "id": n, "method": "service/call", "params": params}).encode()
                        + b"\n"
                    )
                await peer_writer.drain()
                for _ in range(per_round):
                    assert await peer_reader.readline()
                    answered += 1
            ended = host.ended
        host_writer.close()
        peer_writer.close()
        return answered, ended

    assert asyncio.run(main()) == (rounds * per_round, None)


# --- JSON nested too deeply (issue 12): a bad line, a bad answer, refused params -----------

_NESTED = b"[" * 100_000 + b"]" * 100_000
"""100 000 levels: msgspec would recurse until RecursionError, in the read loop."""


def _deep_answer(request_id: int, member: bytes) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,' % request_id + member + b"}"


def test_a_line_nested_too_deeply_is_a_stray_line_and_the_connection_goes_on() -> None:
    strays: list[BadLine] = []

    async def scenario(conn: Connection, peer: Peer) -> None:
        peer.send(_NESTED)
        call = asyncio.create_task(
            conn.call("service/call", ServiceCallParams(key="k", method="m"), ServiceCallResult, deadline=5)
        )
        request = await peer.read()
        peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"result": "ok"}})
        assert (await call).result == "ok"
        assert conn.ended is None

    _run(scenario, on_stray=strays.append)
    assert [s.reason for s in strays] == ["nested too deeply (more than 128 levels)"]


@pytest.mark.parametrize("depth", [129, 100_000])
def test_a_result_nested_too_deeply_fails_its_call_as_a_bad_answer(depth: int) -> None:
    strays: list[BadLine] = []

    async def scenario(conn: Connection, peer: Peer) -> None:
        call = asyncio.create_task(
            conn.call("service/call", ServiceCallParams(key="k", method="m"), ServiceCallResult, deadline=5)
        )
        request = await peer.read()
        peer.send(_deep_answer(request["id"], b'"result":{"result":' + b"[" * depth + b"]" * depth + b"}"))
        with pytest.raises(BadAnswer) as caught:
            await call
        assert (
            caught.value.message
            == "plugin p answered service/call with a result nested too deeply (more than 128 levels)"
        )
        assert caught.value.code == INVALID_PARAMS
        again = asyncio.create_task(
            conn.call("service/call", ServiceCallParams(key="k", method="m"), ServiceCallResult, deadline=5)
        )
        request = await peer.read()
        peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"result": "ok"}})
        assert (await again).result == "ok"

    _run(scenario, on_stray=strays.append)
    assert strays == []


def test_an_error_whose_data_is_nested_too_deeply_keeps_its_code_and_message() -> None:
    async def scenario(conn: Connection, peer: Peer) -> None:
        call = asyncio.create_task(
            conn.call("service/call", ServiceCallParams(key="k", method="m"), ServiceCallResult, deadline=5)
        )
        request = await peer.read()
        peer.send(_deep_answer(request["id"], b'"error":{"data":' + _NESTED + b',"code":-32002,"message":"no"}'))
        with pytest.raises(Refused, match="plugin p: no"):
            await call

    _run(scenario)


def test_a_request_whose_params_are_nested_too_deeply_is_answered_invalid_params() -> None:
    called: list[object] = []

    async def handler(params: ServiceCallParams) -> ServiceCallResult:
        called.append(params)
        return ServiceCallResult(result="handled")

    async def scenario(conn: Connection, peer: Peer) -> None:
        conn.on_request("service/call", ServiceCallParams, handler)
        peer.send(
            b'{"jsonrpc":"2.0","id":"deep","method":"service/call","params":'
            + b'{"a":' * 100_000
            + b"1"
            + b"}" * 100_000
            + b"}"
        )
        answer = await peer.read()
        assert answer["id"] == "deep"
        assert answer["error"] == {"code": INVALID_PARAMS, "message": "params nested too deeply (more than 128 levels)"}
        peer.send({"jsonrpc": "2.0", "id": "fine", "method": "service/call", "params": {"key": "k", "method": "m"}})
        assert (await peer.read())["result"] == {"result": "handled"}

    _run(scenario)
    assert len(called) == 1


def test_a_notification_whose_params_are_nested_too_deeply_is_dropped() -> None:
    notices: list[HostNoticeParams] = []

    async def scenario(conn: Connection, peer: Peer) -> None:
        conn.on_notification("x/notice", HostNoticeParams, notices.append)
        peer.send(b'{"jsonrpc":"2.0","method":"x/notice","params":' + _NESTED + b"}")
        peer.send({"jsonrpc": "2.0", "method": "x/notice", "params": {"message": "after"}})
        call = asyncio.create_task(
            conn.call("service/call", ServiceCallParams(key="k", method="m"), ServiceCallResult, deadline=5)
        )
        request = await peer.read()
        peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"result": "ok"}})
        await call

    _run(scenario)
    assert notices == [_notice("after")]


@pytest.mark.parametrize("id_last", [False, True], ids=["id-first", "id-last"])
def test_an_answer_past_the_line_limit_fails_its_call_at_once_and_the_connection_goes_on(id_last: bool) -> None:
    from bingo.endpoint._framing import MAX_LINE
    from bingo.endpoint.connection import TooLarge

    strays: list[BadLine] = []

    async def scenario(conn: Connection, peer: Peer) -> None:
        call = asyncio.create_task(
            conn.call("service/call", ServiceCallParams(key="k", method="a"), ServiceCallResult, deadline=600)
        )
        request = await peer.read()
        huge = b'"' + b"x" * (MAX_LINE + 10) + b'"'
        rid = json.dumps(request["id"]).encode()
        if id_last:
            peer.writer.write(b'{"result": {"value": ' + huge + b'}, "jsonrpc": "2.0", "id": ' + rid + b"}\n")
        else:
            peer.writer.write(b'{"jsonrpc": "2.0", "id": ' + rid + b', "result": {"value": ' + huge + b"}}\n")
        with pytest.raises(TooLarge) as raised:
            await call
        assert (
            "plugin p answered with 16.0 MiB on one line, past the 16 MiB bingo keeps of one message"
            in raised.value.message
        )
        assert strays == []
        second = asyncio.create_task(
            conn.call("service/call", ServiceCallParams(key="k", method="b"), ServiceCallResult, deadline=5)
        )
        again = await peer.read()
        peer.send({"jsonrpc": "2.0", "id": again["id"], "result": {"result": 2}})
        assert (await second).result == 2

    _run(scenario, on_stray=strays.append)
