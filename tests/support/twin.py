"""The in-memory twin of a plugin: a host-side Link and a fake plugin's Connection, joined
by a memory pair. The proxies' tests run on it (a test helper: it is no part of bingo).

It owns nothing the host uses: no process, no handshake. The fake plugin is a Connection
with handlers registered by method, so a test plays a plugin with a few functions.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Mapping

import msgspec

from bingo.bridge._link import StaticLink
from bingo.endpoint import Connection, memory_pair

__all__ = ["Twin", "memory_twin"]


class Twin(msgspec.Struct, frozen=True):
    """`link` is what a proxy holds; `plugin` is the fake plugin's end; `host` the host's."""

    link: StaticLink
    plugin: Connection
    host: Connection


@contextlib.asynccontextmanager
async def memory_twin(name: str = "p", *, deadlines: Mapping[str, float] | None = None) -> AsyncGenerator[Twin]:
    """A fresh twin for plugin `name`, closed on exit; `deadlines` override the wire's table
    on the host's end."""
    (host_reader, host_writer), (plugin_reader, plugin_writer) = memory_pair()
    host = Connection(host_reader, host_writer, name=f"plugin {name}", deadlines=deadlines)
    plugin = Connection(plugin_reader, plugin_writer, name=f"fake {name}")
    async with host, plugin:
        yield Twin(StaticLink(name, host), plugin, host)
        await asyncio.sleep(0)  # let answers already written be read before closing
