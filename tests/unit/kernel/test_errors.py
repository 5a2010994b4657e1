"""The error hierarchy: one class per way a plugin call fails, each carrying its wire code."""

from __future__ import annotations

from bingo.kernel.errors import (
    BadParams,
    BingoError,
    Cancelled,
    ConnectionClosed,
    DeadlinePassed,
    JanitorError,
    MethodNotFound,
    PluginError,
    PluginUnavailable,
    Refused,
    SpawnError,
    TrustError,
)
from bingo.wire import rpc


def test_each_way_of_failing_carries_the_wire_code_of_its_name() -> None:
    # errors.py spells the numbers itself (the command line must not import the wire): kept equal here.
    assert DeadlinePassed.code == rpc.DEADLINE
    assert Refused.code == rpc.REFUSED
    assert Cancelled.code == rpc.CANCELLED
    assert MethodNotFound.code == rpc.METHOD_NOT_FOUND
    assert BadParams.code == rpc.INVALID_PARAMS


def test_a_plugin_error_without_a_code_of_its_own_has_none_unless_given_one() -> None:
    assert PluginError("x").code == 0
    assert ConnectionClosed("x").code == 0
    assert SpawnError("x").code == 0
    assert PluginError("x", code=-32050).code == -32050
    assert Refused("x").code == rpc.REFUSED


def test_the_plugin_plane_is_one_tree_and_trust_is_its_own_plane() -> None:
    for kind in (
        PluginUnavailable,
        ConnectionClosed,
        DeadlinePassed,
        Refused,
        Cancelled,
        MethodNotFound,
        BadParams,
        SpawnError,
    ):
        assert issubclass(kind, PluginError)
    assert issubclass(JanitorError, SpawnError)
    assert issubclass(TrustError, BingoError)
    assert not issubclass(TrustError, PluginError)


def test_an_error_keeps_its_one_line() -> None:
    error = DeadlinePassed("plugin p did not answer tool/call within 600 s", "raise its deadline")
    assert error.line() == "plugin p did not answer tool/call within 600 s: raise its deadline"
