"""A 100 MB download through the sandbox's proxy, beside the same download direct (ADR-0032).

`interleaved` (the `bench/run` rows) times, round by round with the order rotating, `curl`
fetching 100 MB from a local HTTP server on 127.0.0.1 three ways: direct; through bingo's
proxy as a plain HTTP request (absolute form: the proxy reads the response head and streams
the body by its Content-Length); and through a CONNECT tunnel (`--proxytunnel`: what every
HTTPS download does, bytes relayed both ways). The server is a child process that sends a
file with `sendfile`, so the direct row is the machine's loopback limit as curl sees it; the
proxy runs in this process, on its asyncio loop, as in bingo. Rows are throughput ratios:
proxied / direct (target ≥ 0.5×).

Prints nothing itself: `bench/rows.py` makes the rows. Run alone:
`.venv/bin/python bench/proxy.py [--rounds N] [--megabytes M]`.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bingo.sandbox._proxy import Proxy

__all__ = ["MEGABYTES", "interleaved"]

MEGABYTES = 100
"""The download's size."""
_SERVER = r"""
import os, socket, sys
path, size = sys.argv[1], os.path.getsize(sys.argv[1])
server = socket.create_server(("127.0.0.1", 0))
print(server.getsockname()[1], flush=True)
while True:
    conn, _ = server.accept()
    with conn, open(path, "rb") as f:
        head = b""
        while b"\r\n\r\n" not in head:
            data = conn.recv(65536)
            if not data:
                break
            head += data
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % size)
        conn.sendfile(f)
"""
"""The upstream: one connection at a time, the file by sendfile, then close."""

clock = time.perf_counter


async def _curl(url: str, proxy: str | None, *, tunnel: bool = False) -> float:
    argv = ["curl", "-sS", "--fail", "-o", "/dev/null", "-w", "%{size_download}", "--noproxy", "" if proxy else "*"]
    if proxy is not None:
        argv += ["--proxy", proxy] + (["--proxytunnel"] if tunnel else [])
    started = clock()
    process = await asyncio.create_subprocess_exec(*argv, url, stdout=asyncio.subprocess.PIPE)
    out, _ = await asyncio.wait_for(process.communicate(), 300)
    elapsed = clock() - started
    if process.returncode != 0 or int(out or b"0") == 0:
        raise RuntimeError(f"curl {' '.join(argv[1:])} {url} failed ({process.returncode})")
    return elapsed


async def _rounds(directory: Path, rounds: int, megabytes: int) -> dict[str, list[float]]:
    body = directory / "body.bin"
    with body.open("wb") as f:
        f.truncate(megabytes * 1_000_000)
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _SERVER, str(body), stdout=asyncio.subprocess.PIPE
    )
    try:
        assert server.stdout is not None
        port = int(await asyncio.wait_for(server.stdout.readline(), 30))
        url = f"http://127.0.0.1:{port}/body.bin"

        async def decide(host: str, port: int) -> bool:
            del port
            return host == "127.0.0.1"

        listener = socket.create_server(("127.0.0.1", 0))
        async with Proxy(listener, decide) as proxy:
            through = f"http://127.0.0.1:{proxy.address[1]}"
            steps = {
                "direct": lambda: _curl(url, None),
                "http": lambda: _curl(url, through),
                "connect": lambda: _curl(url, through, tunnel=True),
            }
            names = list(steps)
            for name in names:  # one untimed download each: the page cache, curl's own start
                await steps[name]()
            samples: dict[str, list[float]] = {name: [] for name in names}
            for r in range(rounds):
                for k in range(len(names)):
                    name = names[(r + k) % len(names)]
                    samples[name].append(await steps[name]())
        return samples
    finally:
        server.kill()
        await server.wait()


def interleaved(directory: Path, rounds: int, megabytes: int = MEGABYTES) -> dict[str, list[float]] | None:
    """Seconds per download, `rounds` of each way ("direct", "http", "connect"); None without
    curl on this machine."""
    if shutil.which("curl") is None:
        return None
    return asyncio.run(_rounds(directory, rounds, megabytes))


def main() -> None:
    parser = argparse.ArgumentParser(description="a download through the sandbox's proxy against direct")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--megabytes", type=int, default=MEGABYTES)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bingo-bench-proxy-") as tmp:
        found = interleaved(Path(tmp), args.rounds, args.megabytes)
    if found is None:
        print("no curl on this machine: nothing measured")
        return
    direct = statistics.median(found["direct"])
    for name, samples in found.items():
        seconds = statistics.median(samples)
        print(
            f"{name:>8}: median {seconds * 1e3:,.0f} ms, {args.megabytes / seconds:,.0f} MB/s, {direct / seconds:.2f}× direct"
        )


if __name__ == "__main__":
    main()
