"""The run's confined spawns, from bingo's side: which network they join, and the listener
bingo's proxy serves on.

Owns the choice each confined spawn's request carries: the run's network namespace once
`proxy_listener()` has handed its listener over (so that the proxy is there to serve it),
else Landlock's TCP rule to the proxy's port (the degraded path of ADR-0030). The janitor's
protocol is `janitor/_client.py`'s; what is applied in the child is `janitor/_confine.py`'s.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from pathlib import Path

from ._policy import Policy
from .janitor import USE_JANITOR, JanitorClient, Spawned

__all__ = ["more_listener", "proxy_listener", "spawn"]

_NO_USERNS = False
"""A private knob for tests (tests/unit/sandbox/): act as if user namespaces were refused,
so that the degraded path (Landlock TCP rules, no network namespace) is tested on a machine
that has them. Never set by bingo itself."""


refused = ""
"""Why the run's network namespace could not be made, once `proxy_listener` found out (the
kernel's settings may allow user namespaces while a container's seccomp profile or a
security module refuses them): `probe()` says it from then on."""


async def proxy_listener() -> tuple[socket.socket | None, str]:
    """The TCP socket listening on 127.0.0.1:PORT inside the run's network namespace, for
    bingo's proxy to accept on (the caller owns it; `getsockname()` names the port that
    `Policy.proxy` must carry), and ""; or None and why there is none, in words (then confined
    processes are spawned on the degraded path: the proxy listens on the host's loopback and
    Landlock allows TCP to its port alone)."""
    if not USE_JANITOR:
        return None, "network namespaces are Linux's"
    if _NO_USERNS:
        return None, "unprivileged user namespaces are refused (forced by a test)"
    global refused
    client = JanitorClient.running()
    got = await client.network()
    if isinstance(got, str):
        refused = got
        return None, got
    client.netns = True
    return got[0], ""


async def more_listener() -> tuple[socket.socket | None, str]:
    """Another TCP socket listening on 127.0.0.1 inside the run's network namespace (after
    `proxy_listener()` made it), so that each confined process has a proxy of its own and every
    request is decided for who made it (ADR-0031); or None and why, as `proxy_listener`."""
    if not USE_JANITOR:
        return None, "network namespaces are Linux's"
    if _NO_USERNS:
        return None, "unprivileged user namespaces are refused (forced by a test)"
    client = JanitorClient.running()
    if not client.netns:
        return None, "the run has no network namespace"
    got = await client.network(another=True)
    if isinstance(got, str):
        return None, got
    return got[0], ""


async def spawn(
    path: str,
    argv: Sequence[str],
    env: dict[str, str],
    cwd: Path,
    *,
    grace: float,
    policy: Policy | None,
    merged: bool = False,
    warden: bool = True,
) -> Spawned:
    """Start `path` as `argv` through the run's janitor (see `JanitorClient.spawn`), confined
    by `policy` when one is given: in the run's network namespace once `proxy_listener()` made
    it, else on the degraded path.

    Raises:
        OSError: it cannot be started, or not confined as asked.
    """
    client = JanitorClient.running()
    netns = policy is not None and client.netns and not _NO_USERNS
    return await client.spawn(
        path, argv, env, cwd, grace=grace, policy=policy, netns=netns, merged=merged, warden=warden
    )
