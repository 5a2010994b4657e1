"""The handshake: what a plugin is told, and the one validator of its answer."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import msgspec
import pytest

from bingo.bridge.handshake import handshake, initialize_params, read_handshake
from bingo.endpoint.connection import BadAnswer
from bingo.wire import PROTOCOL_VERSION, InitializeParams, InitializeResult, ToolSpec, Wire
from tests.support.twin import memory_twin

_PARAMS = initialize_params(
    root=Path("/plugins/wc"), config={"greeting": "hi"}, host_version="1.0", cwd=Path("/w"), data_dir=Path("/d/wc")
)


def test_initialize_tells_the_protocol_the_root_the_slice_and_the_host() -> None:
    assert msgspec.json.decode(msgspec.json.encode(_PARAMS)) == {
        "protocol": PROTOCOL_VERSION,
        "pluginRoot": "/plugins/wc",
        "config": {"greeting": "hi"},
        "env": {"host": "bingo", "hostVersion": "1.0", "platform": sys.platform, "cwd": "/w", "dataDir": "/d/wc"},
    }


def test_an_answer_in_the_hosts_protocol_under_the_manifests_name_is_the_declaration() -> None:
    answer = read_handshake(b'{"protocol": 5, "name": "wc", "tools": [{"name": "count"}]}', "wc")
    assert isinstance(answer, InitializeResult)
    assert answer.tools == [ToolSpec(name="count")]


def test_another_protocol_or_name_is_refused_in_words_before_the_rest_is_read() -> None:
    # The rest would not decode ("tools" is no list): the two fields are checked first.
    assert read_handshake(b'{"protocol": 6, "name": "wc", "tools": 1}', "wc") == (
        "it speaks protocol 6, but this host speaks only protocol 5"
    )
    assert read_handshake(b'{"protocol": 5, "name": "other", "tools": 1}', "wc") == (
        "its handshake says it is 'other', but its manifest says 'wc'"
    )


class _Wrong(Wire, frozen=True):
    protocol: int
    name: str
    tools: int


def test_an_answer_of_the_wrong_shape_is_a_bad_answer_in_the_hosts_words() -> None:
    async def main() -> None:
        async with asyncio.timeout(5), memory_twin("wc") as twin:

            async def initialize(params: InitializeParams) -> _Wrong:
                return _Wrong(protocol=5, name="wc", tools=1)

            twin.plugin.on_request("initialize", InitializeParams, initialize)
            with pytest.raises(BadAnswer) as caught:
                await handshake(twin.host, _PARAMS, "wc")
            assert caught.value.message.startswith("its answer has the wrong shape: ")

    asyncio.run(main())
