"""The handshake: `initialize`, the first call on every plugin connection.

Owns what the host tells a plugin (`initialize_params`: protocol 5, its root, its
`plugins.<name>` slice, the host's environment and the plugin's data directory), the one
validator of its answer (`read_handshake`: the protocol and the name are checked before the
rest is believed, and the words refusing either) and the exchange itself (`handshake`). It
does not decide what a refusal costs (the plugin handle stops the plugin for good and says
so) nor compare the declaration with the registry (the host does).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import msgspec

from ..endpoint import BadAnswer, decoder_for
from ..wire import PROTOCOL_VERSION, HostEnv, InitializeParams, InitializeResult, Json
from . import _problems as P
from ._link import Peer

__all__ = ["handshake", "initialize_params", "read_handshake"]


class _Peek(msgspec.Struct):
    """The two handshake fields checked before the rest is believed."""

    protocol: int | None = None
    name: str | None = None


def initialize_params(
    *, root: Path, config: Mapping[str, Json], host_version: str, cwd: Path, data_dir: Path
) -> InitializeParams:
    """The params of `initialize` for the plugin in `root` (INTERFACE.md §5)."""
    return InitializeParams(
        protocol=PROTOCOL_VERSION,
        plugin_root=str(root),
        config=dict(config),
        env=HostEnv(
            host="bingo",
            host_version=host_version,
            platform=sys.platform,
            cwd=str(cwd),
            data_dir=str(data_dir),
        ),
    )


def read_handshake(raw: msgspec.Raw | bytes, manifest_name: str) -> InitializeResult | str:
    """The handshake validator: the plugin's InitializeResult, or the words refusing it (a
    protocol this host does not speak, a name other than the manifest's). The two fields are
    checked before the rest is believed.

    Raises:
        msgspec.DecodeError: the answer is not JSON of the handshake's shape.
    """
    peek = decoder_for(_Peek).decode(raw)
    if peek.protocol != PROTOCOL_VERSION:
        return P.PROTOCOL.said(theirs=peek.protocol, ours=PROTOCOL_VERSION)
    if peek.name != manifest_name:
        return P.HANDSHAKE_NAME.said(theirs=peek.name, ours=manifest_name)
    return decoder_for(InitializeResult).decode(raw)


async def handshake(
    conn: Peer,
    params: InitializeParams,
    manifest_name: str,
    *,
    on_declared: Callable[[msgspec.Raw], None] | None = None,
) -> InitializeResult | str:
    """Send `initialize` on `conn` and read the answer, within `initialize`'s deadline: the
    declaration, or the words refusing it. `on_declared` is handed an accepted answer as it
    was written, for what its decode drops (bridge/tool.py's `declaration_problems`).

    Raises:
        BadAnswer: the answer is not of the handshake's shape.
        PluginError: the call failed (DeadlinePassed, ConnectionClosed, an error answered).
    """
    raw = await conn.call("initialize", params, msgspec.Raw)
    try:
        answer = read_handshake(raw, manifest_name)
    except msgspec.DecodeError as exc:
        raise BadAnswer(f"its answer has the wrong shape: {exc}") from exc
    if on_declared is not None and not isinstance(answer, str):
        on_declared(raw)
    return answer
