"""The seam between the run's sandbox (`_runtime.py`) and the mechanism (ADR-0030) and proxy
(ADR-0032): the probe in words, and the proxy's listeners.

Each confined process gets a proxy listener of its own, so the proxy's every decision is made
for who asked: inside the run's network namespace (`proxy_listener`, then `more_listener` for
each further process), or, where there is none (the degraded path), on the host's loopback,
where Landlock bounds the process's TCP to its listener's port.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Awaitable, Callable

__all__ = ["Decide", "Started", "probe", "start_proxy"]

Decide = Callable[[str, int], Awaitable[bool]]
"""The proxy's question for one request: may it reach host:port?"""

Started = tuple[tuple[str, int], Callable[[], Awaitable[None]]]
"""A proxy listening: its address (what `Policy.proxy` carries), and how to stop it."""


def probe() -> tuple[str | None, str | None, tuple[str, ...]]:
    """(the mechanism in force, in words, or None; what is missing, in words, or None; what is
    weaker than the full sandbox here, in words)."""
    from .janitor._syscall import USE_JANITOR  # not the client's module: no process is started here

    if not USE_JANITOR:
        return None, "this system is not Linux: bingo's sandbox uses Linux's Landlock, seccomp and namespaces", ()
    from ._support import probe as examine

    try:
        support = examine()
    except OSError as exc:
        return None, f"the kernel could not be asked ({exc.strerror or exc})", ()
    if not support.confines:
        return None, "; ".join(support.missing) or "Landlock or seccomp is missing", ()
    return support.mechanism, None, support.weaker


async def _listener(first: bool) -> tuple[socket.socket, str]:
    """A listener for one process's proxy, in the run's network namespace where there is one
    (and ""), else on the host's loopback, the degraded path (and why there is no namespace:
    the kernel may allow user namespaces and a container's seccomp profile refuse them)."""
    from ._run import more_listener, proxy_listener

    made, why = await (proxy_listener() if first else more_listener())
    if made is not None:
        return made, ""
    return socket.create_server(("127.0.0.1", 0)), why or "the run has no network namespace"


async def start_proxy(decide: Decide, refusal: Callable[[str, int], str], *, first: bool) -> tuple[Started, str]:
    """Start a proxy on a listener of its own whose every request is decided by `decide` (a
    refused one is answered 403 with `refusal`'s line); with it, "" or why it listens on the
    degraded path."""
    from ._proxy import Proxy

    listener, degraded = await _listener(first)
    proxy = Proxy(listener, decide, refusal=refusal)  # it owns the listener: it closes it
    await proxy.__aenter__()

    async def close() -> None:
        with contextlib.suppress(Exception):
            await proxy.__aexit__(None, None, None)

    return (proxy.address, close), degraded
