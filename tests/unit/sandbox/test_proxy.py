"""The sandbox's proxy against real local servers on 127.0.0.1 (ADR-0032).

Every upstream here is an asyncio server in the test's own loop that records each connection
it accepts and each request it reads, so a refusal is proven from the attacked side: the
server's record stays empty. Clients speak raw bytes, so what crosses the proxy is asserted
exactly.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import ssl
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bingo.sandbox._peer import BUFFER
from bingo.sandbox._proxy import Limits, Proxy
from tests.support.summary import record

WAIT = 5.0
"""Every wait in these tests is bounded by this."""

SHORT = Limits(head=0.1, decide=0.1, idle=0.2)
"""Deadlines under test, on the real clock: the virtual clock (tests/support/clock.py) jumps
whenever no socket is ready at that instant, and a loopback byte still in the kernel is not."""

Resolved = tuple[
    socket.AddressFamily, socket.SocketKind, int, str, tuple[str, int] | tuple[str, int, int, int] | tuple[int, bytes]
]
"""One answer of `socket.getaddrinfo`."""


# --- upstreams that keep a record ----------------------------------------------------


@dataclass
class Record:
    """What an upstream saw: connections accepted, request heads read, bodies read."""

    connections: int = 0
    heads: list[bytes] = field(default_factory=lambda: [])
    bodies: list[bytes] = field(default_factory=lambda: [])
    open: int = 0
    closed: asyncio.Event = field(default_factory=asyncio.Event)


@contextlib.asynccontextmanager
async def upstream(
    handle: Callable[[asyncio.StreamReader, asyncio.StreamWriter, Record], Awaitable[None]],
    tls: ssl.SSLContext | None = None,
) -> AsyncIterator[tuple[int, Record]]:
    """A server on 127.0.0.1 running `handle` per connection; yields its port and record."""
    record = Record()
    tasks: set[asyncio.Task[None]] = set()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        record.connections += 1
        record.open += 1
        try:
            await handle(reader, writer, record)
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            record.open -= 1
            if record.open == 0:
                record.closed.set()

    def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.get_running_loop().create_task(serve(reader, writer))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    server = await asyncio.start_server(accept, "127.0.0.1", 0, ssl=tls)
    try:
        yield server.sockets[0].getsockname()[1], record
    finally:
        server.close()
        for task in list(tasks):
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _body(reader: asyncio.StreamReader, head: bytes) -> bytes:
    """The body of a request whose head is `head` (Content-Length or chunked)."""
    lowered = head.lower()
    if b"transfer-encoding: chunked" in lowered:
        out = bytearray()
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                while await reader.readuntil(b"\r\n") != b"\r\n":
                    pass
                return bytes(out)
            out += await reader.readexactly(size)
            assert await reader.readexactly(2) == b"\r\n"
    for line in lowered.split(b"\r\n"):
        if line.startswith(b"content-length:"):
            return await reader.readexactly(int(line.split(b":")[1]))
    return b""


async def http_handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, record: Record) -> None:
    """GET /size/N: N bytes by Content-Length; POST /echo: the body back by Content-Length;
    POST /chunked: the body back chunked, in 3 chunks, with a trailer."""
    head = await reader.readuntil(b"\r\n\r\n")
    record.heads.append(head)
    path = head.split(b" ")[1].split(b"?")[0]
    if path == b"/continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    body = await _body(reader, head)
    record.bodies.append(body)
    if path == b"/nothing":
        return  # closes without a response
    if path == b"/no-body":
        # A HEAD's answer, or a 304: a length, and no body; the connection stays open.
        writer.write(b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n")
    elif path == b"/to-the-end":
        writer.write(b"HTTP/1.0 200 OK\r\n\r\nall of it, until the server closes")
        return
    elif path.startswith(b"/size/"):
        n = int(path.removeprefix(b"/size/"))
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nKeep-Alive: timeout=5\r\nX-Private: 1\r\nConnection: keep-alive, x-private\r\n\r\n"
            % n
        )
        sent = 0
        while sent < n:
            part = min(n - sent, 65536)
            writer.write(b"x" * part)
            await writer.drain()
            sent += part
    elif path == b"/chunked":
        third = len(body) // 3
        parts = [body[:third], body[third : 2 * third], body[2 * third :]]
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for part in parts:
            writer.write(b"%x\r\n%s\r\n" % (len(part), part))
        writer.write(b"0\r\nX-Sum: %d\r\n\r\n" % len(body))
    else:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    await writer.drain()
    # Stays open, as a keep-alive server may: the proxy ends the exchange by the framing.
    await reader.read()


async def echo_handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, record: Record) -> None:
    while data := await reader.read(65536):
        record.bodies.append(data)
        writer.write(data)
        await writer.drain()


# --- the proxy and a raw client --------------------------------------------------------


def listener() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


def granting(*hosts: str) -> Callable[[str, int], Awaitable[bool]]:
    async def decide(host: str, port: int) -> bool:
        del port
        return host in hosts

    return decide


async def exchange(proxy: Proxy, data: bytes) -> bytes:
    """Send `data` to the proxy and read everything it answers until it closes."""
    reader, writer = await asyncio.open_connection(*proxy.address)
    try:
        writer.write(data)
        async with asyncio.timeout(WAIT):
            return await reader.read(-1)
    finally:
        writer.close()


async def tunnel(proxy: Proxy, target: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection(*proxy.address)
    writer.write(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    async with asyncio.timeout(WAIT):
        head = await reader.readuntil(b"\r\n\r\n")
    assert head == b"HTTP/1.1 200 Connection established\r\n\r\n"
    return reader, writer


def split(response: bytes) -> tuple[bytes, bytes]:
    head, _, body = response.partition(b"\r\n\r\n")
    return head, body


# --- plain HTTP ------------------------------------------------------------------------


def test_a_get_reaches_the_server_in_origin_form_without_the_proxys_headers() -> None:
    async def main() -> None:
        async with upstream(http_handler) as (port, record), Proxy(listener(), granting("127.0.0.1")) as proxy:
            response = await exchange(
                proxy,
                (
                    f"GET http://127.0.0.1:{port}/size/10?q=1#frag HTTP/1.1\r\nHost: wrong.example\r\n"
                    "Proxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\nConnection: x-hop\r\n"
                    "X-Hop: 1\r\nAccept: */*\r\n\r\n"
                ).encode(),
            )
        assert record.heads == [
            f"GET /size/10?q=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: */*\r\nConnection: close\r\n\r\n".encode()
        ]
        head, body = split(response)
        # The server's hop-by-hop headers (Keep-Alive, and X-Private named by Connection) stop here.
        assert head == b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close"
        assert body == b"x" * 10

    asyncio.run(main())


def test_a_post_body_by_content_length_streams_up_and_its_echo_down() -> None:
    payload = bytes(range(256)) * 4096  # 1 MiB, past every buffer on the way

    async def main() -> None:
        async with upstream(http_handler) as (port, record), Proxy(listener(), granting("localhost")) as proxy:
            response = await exchange(
                proxy,
                (f"POST http://localhost:{port}/echo HTTP/1.1\r\nContent-Length: {len(payload)}\r\n\r\n").encode()
                + payload,
            )
        assert record.bodies == [payload]
        head, body = split(response)
        assert head.startswith(b"HTTP/1.1 200 OK\r\n")
        assert body == payload

    asyncio.run(main())


def test_a_chunked_body_passes_as_it_came_both_ways() -> None:
    async def main() -> None:
        async with upstream(http_handler) as (port, record), Proxy(listener(), granting("127.0.0.1")) as proxy:
            response = await exchange(
                proxy,
                (
                    f"POST http://127.0.0.1:{port}/chunked HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: yes\r\n\r\n"
                ).encode(),
            )
        assert record.bodies == [b"hello world"]
        head, body = split(response)
        assert head == b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close"
        assert body == b"3\r\nhel\r\n3\r\nlo \r\n5\r\nworld\r\n0\r\nX-Sum: 11\r\n\r\n"

    asyncio.run(main())


def test_an_interim_answer_goes_on_before_the_body_and_the_response() -> None:
    async def main() -> None:
        async with upstream(http_handler) as (port, record), Proxy(listener(), granting("127.0.0.1")) as proxy:
            reader, writer = await asyncio.open_connection(*proxy.address)
            writer.write(
                f"PUT http://127.0.0.1:{port}/continue HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n".encode()
            )
            async with asyncio.timeout(WAIT):
                assert await reader.readuntil(b"\r\n\r\n") == b"HTTP/1.1 100 Continue\r\n\r\n"
                writer.write(b"data")  # sent only once the server said so
                response = await reader.read()
            writer.close()
        assert record.bodies == [b"data"]
        assert split(response) == (b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close", b"data")

    asyncio.run(main())


@pytest.mark.parametrize("method", ["HEAD", "GET"])
def test_a_response_without_a_body_ends_at_its_head(method: str) -> None:
    async def main() -> bytes:
        async with upstream(http_handler) as (port, _), Proxy(listener(), granting("127.0.0.1")) as proxy:
            path = "size/10" if method == "HEAD" else "no-body"
            return await exchange(proxy, f"{method} http://127.0.0.1:{port}/{path} HTTP/1.1\r\n\r\n".encode())

    head, body = split(asyncio.run(main()))
    assert head.endswith(b"\r\nContent-Length: 10\r\nConnection: close") and body == b""


def test_a_response_without_framing_goes_on_until_the_server_closes() -> None:
    async def main() -> bytes:
        async with upstream(http_handler) as (port, _), Proxy(listener(), granting("127.0.0.1")) as proxy:
            return await exchange(proxy, f"GET http://127.0.0.1:{port}/to-the-end HTTP/1.0\r\n\r\n".encode())

    assert asyncio.run(main()) == b"HTTP/1.0 200 OK\r\nConnection: close\r\n\r\nall of it, until the server closes"


def test_a_server_that_closes_without_answering_gets_502() -> None:
    async def main() -> bytes:
        async with upstream(http_handler) as (port, _), Proxy(listener(), granting("127.0.0.1")) as proxy:
            return await exchange(proxy, f"GET http://127.0.0.1:{port}/nothing HTTP/1.1\r\n\r\n".encode())

    response = asyncio.run(main())
    assert response.startswith(b"HTTP/1.1 502 ")
    assert split(response)[1] == b"bingo's proxy had no response: the server closed the connection\n"


def test_a_request_with_both_framings_is_refused_and_never_sent() -> None:
    async def main() -> None:
        async with upstream(http_handler) as (port, record), Proxy(listener(), granting("127.0.0.1")) as proxy:
            response = await exchange(
                proxy,
                (
                    f"POST http://127.0.0.1:{port}/echo HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "0\r\n\r\n"
                ).encode(),
            )
        assert response.startswith(b"HTTP/1.1 400 ")
        assert record.connections == 0

    asyncio.run(main())


# --- CONNECT ---------------------------------------------------------------------------


def test_a_tunnel_relays_bytes_both_ways_and_passes_on_the_end() -> None:
    async def main() -> None:
        async with upstream(echo_handler) as (port, record), Proxy(listener(), granting("127.0.0.1")) as proxy:
            reader, writer = await tunnel(proxy, f"127.0.0.1:{port}")
            for n in range(3):
                writer.write(b"ping %d" % n)
                async with asyncio.timeout(WAIT):
                    assert await reader.readexactly(6) == b"ping %d" % n
            writer.write_eof()
            async with asyncio.timeout(WAIT):
                assert await reader.read() == b""  # the echo server saw our end and ended too
                await record.closed.wait()
            writer.close()
        assert record.connections == 1

    asyncio.run(main())


def _certificate(directory: Path) -> tuple[Path, Path]:
    key, cert = directory / "key.pem", directory / "cert.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return key, cert


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the test's certificate")
def test_a_tls_handshake_goes_through_a_tunnel(tmp_path: Path) -> None:
    key, cert = _certificate(tmp_path)
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert, key)
    client_context = ssl.create_default_context(cafile=str(cert))

    async def tls_echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, record: Record) -> None:
        record.heads.append(await reader.readuntil(b"\n"))
        writer.write(b"secret reply\n")
        await writer.drain()

    async def main() -> None:
        record = Record()

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                await tls_echo(reader, writer, record)
            finally:
                writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=server_context)
        port = server.sockets[0].getsockname()[1]
        try:
            async with Proxy(listener(), granting("localhost")) as proxy:
                reader, writer = await tunnel(proxy, f"localhost:{port}")
                async with asyncio.timeout(WAIT):
                    await writer.start_tls(client_context, server_hostname="localhost")
                    writer.write(b"hello over tls\n")
                    assert await reader.readuntil(b"\n") == b"secret reply\n"
                writer.close()
        finally:
            server.close()
        assert record.heads == [b"hello over tls\n"]

    asyncio.run(main())


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the test's certificate")
def test_a_real_client_reaches_https_and_http_through_the_proxy_and_shows_the_refusal(tmp_path: Path) -> None:
    import httpx

    key, cert = _certificate(tmp_path)
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert, key)

    async def main() -> None:
        async with (
            upstream(http_handler, server_context) as (https_port, secure),
            upstream(http_handler) as (http_port, plain),
            Proxy(listener(), granting("localhost")) as proxy,
        ):
            through = f"http://127.0.0.1:{proxy.address[1]}"
            async with httpx.AsyncClient(
                proxy=through, verify=ssl.create_default_context(cafile=str(cert)), timeout=WAIT
            ) as client:
                posted = await client.post(f"https://localhost:{https_port}/echo", content=b"z" * 300_000)
                fetched = await client.get(f"http://localhost:{http_port}/size/1000")
                with pytest.raises(httpx.ProxyError) as refused:
                    await client.get(f"https://127.0.0.1:{https_port}/size/1")
        assert posted.status_code == 200 and posted.content == b"z" * 300_000
        assert fetched.status_code == 200 and fetched.content == b"x" * 1000
        assert str(refused.value) == "403 bingo's sandbox refused 127.0.0.1: grant it in sandbox.network.allow"
        assert (secure.connections, plain.connections) == (1, 1)

    asyncio.run(main())


def test_many_tunnels_at_once_each_get_their_own_bytes() -> None:
    async def main() -> None:
        async with upstream(echo_handler) as (port, record), Proxy(listener(), granting("127.0.0.1")) as proxy:

            async def one(n: int) -> bytes:
                reader, writer = await tunnel(proxy, f"127.0.0.1:{port}")
                message = b"%05d" % n * 1000
                writer.write(message)
                async with asyncio.timeout(WAIT):
                    got = await reader.readexactly(len(message))
                writer.close()
                return got

            async with asyncio.timeout(WAIT * 4):
                got = await asyncio.gather(*(one(n) for n in range(100)))
        assert got == [b"%05d" % n * 1000 for n in range(100)]
        assert record.connections == 100

    asyncio.run(main())


@pytest.mark.skipif(
    not Path("/proc/sys/net/ipv4/tcp_rmem").exists(), reason="the kernel's socket buffer limits bound the test"
)
def test_a_reader_that_does_not_keep_up_holds_the_writer_back() -> None:
    # The invariant is checked at every read, so it needs no clock: what the server has
    # written and the client not yet read is never more than the sockets on the way can hold
    # (the proxy's two at their kernel maximum, the test's two set small) and one buffer of
    # the proxy's. A proxy that read without waiting for its writes would let the server run
    # ahead by the whole download.
    rmem = int(Path("/proc/sys/net/ipv4/tcp_rmem").read_text().split()[2])
    wmem = int(Path("/proc/sys/net/ipv4/tcp_wmem").read_text().split()[2])
    small, piece = 64 * 1024, 1 << 20
    slack = 4 * small + 2 * piece + 3 * small  # the test's sockets (the kernel doubles), the server's
    #                                           transport, the client's stream reader
    bound = rmem + wmem + BUFFER + slack
    total = 2 * bound
    written = 0

    async def flood(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, record: Record) -> None:
        nonlocal written
        writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, small)
        while written < total:
            writer.write(b"f" * piece)
            await writer.drain()
            written += piece

    async def main() -> int:
        async with upstream(flood) as (port, _), Proxy(listener(), granting("127.0.0.1")) as proxy:
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, small)
            sock.connect(proxy.address)
            reader, writer = await asyncio.open_connection(sock=sock)
            writer.write(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
            received = -len(b"HTTP/1.1 200 Connection established\r\n\r\n")
            ahead = 0
            async with asyncio.timeout(WAIT * 6):
                while received < total:
                    data = await reader.read(small)
                    assert data, "the tunnel ended early"
                    received += len(data)
                    ahead = max(ahead, written - received)
                    assert written - received <= bound
                    for _ in range(8):  # a slow reader: everyone else runs meanwhile
                        await asyncio.sleep(0)
            writer.close()
            return ahead

    ahead = asyncio.run(main())
    record("proxy", "bytes a stalled reader let the writer get ahead (max)", ahead)


def test_leaving_the_proxy_closes_every_tunnel_and_leaves_no_task() -> None:
    async def main() -> None:
        async with upstream(echo_handler) as (port, record):
            async with Proxy(listener(), granting("127.0.0.1")) as proxy:
                clients = [await tunnel(proxy, f"127.0.0.1:{port}") for _ in range(5)]
                assert proxy.connections == 5
            assert asyncio.all_tasks() - {asyncio.current_task()} - _upstream_tasks() == set()
            for reader, writer in clients:
                async with asyncio.timeout(WAIT):
                    assert await reader.read() == b""  # the client sees its tunnel end
                writer.close()
            async with asyncio.timeout(WAIT):
                await record.closed.wait()  # and so does every upstream connection
            with pytest.raises(OSError):  # the listener is closed
                await asyncio.open_connection(*proxy.address)

    asyncio.run(main())


def test_the_proxy_may_be_left_from_another_task_than_the_one_that_entered_it() -> None:
    # As the run's sandbox does: a proxy started at a process's first spawn (in a turn's
    # task), stopped when the run ends (in the main task).
    async def main() -> None:
        async with upstream(echo_handler) as (port, record):
            proxy = Proxy(listener(), granting("127.0.0.1"))
            await asyncio.create_task(proxy.__aenter__())
            reader, writer = await tunnel(proxy, f"127.0.0.1:{port}")
            await asyncio.create_task(proxy.__aexit__(None, None, None))
            async with asyncio.timeout(WAIT):
                assert await reader.read() == b""
                await record.closed.wait()
            writer.close()
            assert asyncio.all_tasks() - {asyncio.current_task()} - _upstream_tasks() == set()

    asyncio.run(main())


def _upstream_tasks() -> set[asyncio.Task[object]]:
    return {task for task in asyncio.all_tasks() if "serve" in repr(task.get_coro())}


# --- refusals --------------------------------------------------------------------------


def test_a_refused_host_gets_403_with_the_line_and_the_server_is_never_contacted() -> None:
    async def main() -> None:
        asked: list[tuple[str, int]] = []

        async def decide(host: str, port: int) -> bool:
            asked.append((host, port))
            return False

        async with upstream(http_handler) as (port, record), Proxy(listener(), decide) as proxy:
            connect = await exchange(proxy, f"CONNECT LocalHost.:{port} HTTP/1.1\r\n\r\n".encode())
            get = await exchange(
                proxy, f"POST http://127.0.0.1:{port}/echo HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc".encode()
            )
        line = "bingo's sandbox refused localhost: grant it in sandbox.network.allow"
        assert (
            connect
            == (
                f"HTTP/1.1 403 {line}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {len(line) + 1}\r\n"
                f"Connection: close\r\n\r\n{line}\n"
            ).encode()
        )
        assert split(get)[1] == b"bingo's sandbox refused 127.0.0.1: grant it in sandbox.network.allow\n"
        assert asked == [("localhost", port), ("127.0.0.1", port)]
        assert record.connections == 0

    asyncio.run(main())


def test_the_refusal_line_is_the_callers() -> None:
    async def main() -> None:
        def line(host: str, port: int) -> str:
            return f"plugin tools may not reach {host}:{port}: grant it in plugins.tools.sandbox.network"

        async with Proxy(listener(), granting(), refusal=line) as proxy:
            response = await exchange(proxy, b"CONNECT pypi.org:443 HTTP/1.1\r\n\r\n")
        assert (
            split(response)[1]
            == b"plugin tools may not reach pypi.org:443: grant it in plugins.tools.sandbox.network\n"
        )

    asyncio.run(main())


def test_a_failing_decision_refuses() -> None:
    async def main() -> None:
        async def decide(host: str, port: int) -> bool:
            raise RuntimeError("the decision broke")

        async with upstream(echo_handler) as (port, record), Proxy(listener(), decide) as proxy:
            response = await exchange(proxy, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
        assert response.startswith(b"HTTP/1.1 403 ")
        assert record.connections == 0

    asyncio.run(main())


@pytest.mark.parametrize(
    "target",
    ["2130706433", "127.1", "0x7f.0.0.1", "local_host", "a..b", "-a.b", "[127.0.0.1]", "ex ample.com", "bücher.de"],
)
def test_a_target_that_is_no_host_name_or_ip_literal_is_refused_unasked(target: str) -> None:
    async def main() -> None:
        asked: list[str] = []

        async def decide(host: str, port: int) -> bool:
            asked.append(host)
            return True

        async with upstream(echo_handler) as (port, record), Proxy(listener(), decide) as proxy:
            response = await exchange(proxy, f"CONNECT {target}:{port} HTTP/1.1\r\n\r\n".encode())
        assert response.startswith(b"HTTP/1.1 400 ")
        assert asked == []
        assert record.connections == 0

    asyncio.run(main())


def test_the_proxy_will_not_connect_to_itself() -> None:
    async def main() -> None:
        async with Proxy(listener(), granting("127.0.0.1", "localhost")) as proxy:
            port = proxy.address[1]
            itself = await exchange(proxy, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
            by_name = await exchange(proxy, f"GET http://localhost:{port}/ HTTP/1.1\r\n\r\n".encode())
        assert itself.startswith(b"HTTP/1.1 403 ") and b"that is the proxy itself" in itself
        assert by_name.startswith(b"HTTP/1.1 403 ") and b"that is the proxy itself" in by_name

    asyncio.run(main())


def test_a_granted_name_that_resolves_to_this_machine_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    real = socket.getaddrinfo

    def rebinding(
        host: str, port: int, family: int = 0, type: int = 0, proto: int = 0, flags: int = 0
    ) -> list[Resolved]:
        if host == "rebind.example.com":
            host = "127.0.0.1"  # what a hostile DNS answer would say
        return real(host, port, family, type, proto, flags)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)

    async def main() -> None:
        async with upstream(echo_handler) as (port, record), Proxy(listener(), granting("rebind.example.com")) as proxy:
            response = await exchange(proxy, f"CONNECT rebind.example.com:{port} HTTP/1.1\r\n\r\n".encode())
        assert response.startswith(b"HTTP/1.1 403 ")
        assert b"the name points at this machine (127.0.0.1)" in response
        assert record.connections == 0

    asyncio.run(main())


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", b"400"),
        (b"GET https://example.com/ HTTP/1.1\r\n\r\n", b"501"),
        (b"GET http://user:pw@example.com/ HTTP/1.1\r\n\r\n", b"400"),
        (b"GET http://example.com/ HTTP/2.0\r\n\r\n", b"505"),
        (b"GET http://example.com/ HTTP/1.1\r\nBad Header\r\n\r\n", b"400"),
        (b"GET http://example.com/ HTTP/1.1\r\nX: a\nInjected: b\r\n\r\n", b"400"),
        (b"CONNECT example.com HTTP/1.1\r\n\r\n", b"400"),
        (b"CONNECT example.com:0 HTTP/1.1\r\n\r\n", b"400"),
        (b"CONNECT example.com:70000 HTTP/1.1\r\n\r\n", b"400"),
        (b"POST http://example.com/ HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", b"501"),
    ],
)
def test_a_malformed_request_gets_one_line_and_is_never_decided(request_bytes: bytes, status: bytes) -> None:
    async def main() -> None:
        asked: list[str] = []

        async def decide(host: str, port: int) -> bool:
            asked.append(host)
            return True

        async with Proxy(listener(), decide) as proxy:
            response = await exchange(proxy, request_bytes)
        head, body = split(response)
        assert head.startswith(b"HTTP/1.1 " + status + b" ")
        assert body.count(b"\n") == 1 and body.startswith(b"bingo's proxy ")
        assert asked == []

    asyncio.run(main())


# --- bounds ----------------------------------------------------------------------------


def test_an_oversized_head_gets_431_and_nothing_is_sent_on() -> None:
    async def main() -> None:
        async with upstream(http_handler) as (port, record), Proxy(listener(), granting("127.0.0.1")) as proxy:
            big = b"X-Filler: " + b"a" * (70 * 1024) + b"\r\n"
            response = await exchange(proxy, f"GET http://127.0.0.1:{port}/ HTTP/1.1\r\n".encode() + big + b"\r\n")
        assert response.startswith(b"HTTP/1.1 431 ")
        assert split(response)[1] == b"bingo's proxy takes request heads of at most 64 KiB\n"
        assert record.connections == 0

    asyncio.run(main())


def test_an_oversized_response_head_gets_502_and_nothing_of_it() -> None:
    async def huge_head(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, record: Record) -> None:
        record.heads.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(b"HTTP/1.1 200 OK\r\nX-Filler: " + b"a" * (70 * 1024) + b"\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        await reader.read()

    async def main() -> bytes:
        async with upstream(huge_head) as (port, _), Proxy(listener(), granting("127.0.0.1")) as proxy:
            return await exchange(proxy, f"GET http://127.0.0.1:{port}/ HTTP/1.1\r\n\r\n".encode())

    response = asyncio.run(main())
    assert split(response) == (
        b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 53\r\nConnection: close",
        b"bingo's proxy had a response head longer than 64 KiB\n",
    )


def test_a_silent_client_is_dropped_at_the_head_deadline() -> None:
    async def main() -> bytes:
        async with Proxy(listener(), granting(), limits=SHORT) as proxy:
            reader, writer = await asyncio.open_connection(*proxy.address)
            async with asyncio.timeout(WAIT):
                answer = await reader.read()
            writer.close()
            return answer

    assert split(asyncio.run(main()))[1] == b"bingo's proxy had no request within 0.1 s\n"


def test_an_upstream_that_refuses_the_connection_gets_502_with_one_line() -> None:
    # Bound and kept, never listening: Linux refuses a connection to it, and no other test
    # can take the port meanwhile (as one could once it was closed).
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]

        async def main() -> bytes:
            async with Proxy(listener(), granting("127.0.0.1")) as proxy:
                return await exchange(proxy, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())

        response = asyncio.run(main())
    assert response.startswith(b"HTTP/1.1 502 ")
    assert split(response)[1] == f"bingo's proxy could not connect to 127.0.0.1:{port}: connection refused\n".encode()


def test_an_upstream_connect_past_its_deadline_gets_504(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    release = threading.Event()
    real = socket.getaddrinfo

    def stuck(host: str, port: int, family: int = 0, type: int = 0, proto: int = 0, flags: int = 0) -> list[Resolved]:
        if host == "slow.example.com":
            release.wait(WAIT)  # a resolver that does not answer (released once the 504 is in)
        return real(host, port, family, type, proto, flags)

    monkeypatch.setattr(socket, "getaddrinfo", stuck)

    async def main() -> bytes:
        try:
            async with Proxy(listener(), granting("slow.example.com"), limits=Limits(connect=0.2)) as proxy:
                return await exchange(proxy, b"CONNECT slow.example.com:443 HTTP/1.1\r\n\r\n")
        finally:
            release.set()

    response = asyncio.run(main())
    assert response.startswith(b"HTTP/1.1 504 ")
    assert split(response)[1] == b"bingo's proxy could not connect to slow.example.com:443 within 0.2 s\n"


def test_past_the_connection_limit_the_next_client_gets_503() -> None:
    async def main() -> None:
        async with (
            upstream(echo_handler) as (port, _),
            Proxy(listener(), granting("127.0.0.1"), limits=Limits(connections=2)) as proxy,
        ):
            held = [await tunnel(proxy, f"127.0.0.1:{port}") for _ in range(2)]
            response = await exchange(proxy, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
            assert response.startswith(b"HTTP/1.1 503 ")
            assert proxy.connections == 2
            for _, writer in held:
                writer.close()

    asyncio.run(main())


def test_a_tunnel_where_nothing_moves_is_closed_at_the_idle_deadline() -> None:
    async def main() -> bytes:
        async with (
            upstream(echo_handler) as (port, record),
            Proxy(listener(), granting("127.0.0.1"), limits=SHORT) as proxy,
        ):
            reader, writer = await tunnel(proxy, f"127.0.0.1:{port}")
            writer.write(b"one echo")
            async with asyncio.timeout(WAIT):
                assert await reader.readexactly(8) == b"one echo"
                ended = await reader.read()  # nothing moves: the proxy ends the tunnel
                await record.closed.wait()  # the upstream's side is closed too
            writer.close()
            return ended

    assert asyncio.run(main()) == b""


def test_a_decision_past_its_deadline_refuses() -> None:
    async def main() -> bytes:
        async def never(host: str, port: int) -> bool:
            await asyncio.Event().wait()  # a question nobody answers
            return True

        async with upstream(echo_handler) as (port, record), Proxy(listener(), never, limits=SHORT) as proxy:
            reader, writer = await asyncio.open_connection(*proxy.address)
            writer.write(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
            async with asyncio.timeout(WAIT):
                answer = await reader.read()
            writer.close()
            assert record.connections == 0
            return answer

    answer = asyncio.run(main())
    assert answer.startswith(b"HTTP/1.1 403 bingo's sandbox refused 127.0.0.1: grant it in sandbox.network.allow\r\n")
