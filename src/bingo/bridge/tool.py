"""The bridged tool: the kernel's `Tool`, whose `call` is a `tool/call` across the wire.

Owns what the seed promises about a plugin's tools: the name is rewritten to
`plugin__<plugin>__<tool>` (by `bridged_name`), the traits are always the default ones
whatever the plugin claimed, `tool/progress` is the call's live line, and an interrupted
call sends `tool/cancel` and still waits for the answer, under the same deadline. A late or
malformed answer raises one notice through the link (the kernel only tells the model); a
malformed `display` alone is dropped with one notice, and the model still gets the `parts`.
It does not ask the gate: the kernel does, for every call.
"""

from __future__ import annotations

import asyncio

import msgspec

from ..endpoint import BadAnswer
from ..kernel.errors import DeadlinePassed, PluginError
from ..kernel.interfaces import ToolCall
from ..wire import (
    Part,
    TextPart,
    ToolCallParams,
    ToolCancelParams,
    ToolOutput,
    ToolSpec,
    ToolTraits,
    View,
    Wire,
)
from . import _problems as P
from ._link import Ended, Link, Peer, Unavailable
from ._names import bridged_name

__all__ = ["BridgedTool", "declaration_problems"]

_TRAITS = ToolTraits()
"""Every bridged tool wears these: nothing a process says about itself is believed."""


class _Output(Wire, frozen=True):
    """ToolOutput with its `display` left undecoded: a bad View must not cost the parts."""

    parts: list[Part] = []
    display: msgspec.Raw = msgspec.field(default_factory=lambda: msgspec.Raw(b"null"))
    is_error: bool = False


class _Result(Wire, frozen=True):
    """ToolCallResult (the wire's answer to `tool/call`), holding an `_Output`."""

    output: _Output


_VIEW: msgspec.json.Decoder[View | None] = msgspec.json.Decoder(View | None)


class _DeclaredTools(msgspec.Struct):
    """A handshake's tools with each one's keys as written: what decoding a ToolSpec drops
    in silence (an unknown key) or fills in (a missing `inputSchema`)."""

    tools: list[dict[str, msgspec.Raw]] = []


_DECLARED: msgspec.json.Decoder[_DeclaredTools] = msgspec.json.Decoder(_DeclaredTools)
_TOOL_KEYS = tuple(field.encode_name for field in msgspec.structs.fields(ToolSpec))
"""A ToolSpec's keys on the wire, read off the contract itself."""
_SCHEMA_KEY = next(field.encode_name for field in msgspec.structs.fields(ToolSpec) if field.name == "input_schema")


def declaration_problems(raw: msgspec.Raw | bytes) -> str | None:
    """What a plugin's handshake declares of its tools that bingo would read otherwise than
    meant, in one line (every tool with an unknown key, with the known key it is closest
    to, or with no `inputSchema`, which leaves the model told it takes no input); None when
    there is nothing to say or the answer is not of the handshake's shape (its decode says
    so)."""
    try:
        declared = _DECLARED.decode(raw)
    except msgspec.DecodeError:
        return None
    said: list[str] = []
    for keys in declared.tools:
        try:
            name = msgspec.json.decode(keys.get("name", msgspec.Raw(b'"?"')), type=str)
        except msgspec.DecodeError:
            name = "?"
        unknown = P.unknown_keys(list(keys), _TOOL_KEYS)
        found: list[str] = []
        if unknown:
            found.append(
                P.UNKNOWN_KEYS.said(
                    whose="", has="", s="s" if len(unknown) > 1 else "", keys=", ".join(unknown)
                ).strip()
            )
        if _SCHEMA_KEY not in keys:
            found.append(P.NO_INPUT_SCHEMA.words(key=_SCHEMA_KEY))
        if found:
            said.append(f"tool {name} has {' and '.join(found)}")
    if not said:
        return None
    return "; ".join(said) + f" (a tool's keys are {', '.join(_TOOL_KEYS)})"


class BridgedTool:
    """A plugin's tool, as the kernel sees it."""

    def __init__(self, link: Link, declared: ToolSpec) -> None:
        self._link = link
        self._own_name = declared.name
        self._spec = ToolSpec(
            name=bridged_name(link.name, declared.name),
            description=declared.description,
            input_schema=declared.input_schema,
        )
        self._source = link.name

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    @property
    def traits(self) -> ToolTraits:
        return _TRAITS

    @property
    def source(self) -> str:
        return self._source

    async def call(self, call: ToolCall) -> ToolOutput:
        """Run the plugin's tool. A plugin that is not running answers an error output at
        once; one that fails, is late or dies during the call raises PluginError."""
        if self._link.current() is None:
            # A start (cold, or a respawn) is on this call's path: its live line says so
            # until the plugin's own progress, or the answer, replaces it.
            call.progress(f"starting {self._source}")
        try:
            conn = await self._link.connection()
        except Unavailable as exc:
            return ToolOutput(parts=[TextPart(text=exc.line())], is_error=True)
        params = ToolCallParams(
            call_id=call.call_id,
            name=self._own_name,
            input=call.input,
            cwd=call.cwd,
            session=call.session,
            turn=call.turn,
        )
        calls = self._link.calls
        calls.begin(call)
        # The cancel goes out on the loop's next turn: an interrupt that came before this
        # call began must still reach the plugin after its request, which `conn.call`
        # writes before it first waits.
        loop = asyncio.get_running_loop()

        def cancel() -> None:
            loop.call_soon(_send_cancel, conn, call.call_id)

        unregister = call.interrupted.on_set(cancel)
        own_name = self._own_name

        def abandon() -> None:
            self._link.abandon(f"it did not answer tool/cancel of {own_name}, and the person stopped waiting for it")

        unabandon = call.abandoned.on_set(abandon)
        try:
            result = await conn.call("tool/call", params, _Result)
        except Ended as exc:
            # A death had its notice when the process stopped, its last words quoted there:
            # the call's line says how it ended, and not those words again.
            raise exc.unsaid() from exc
        except PluginError as exc:
            # The kernel hands a failed call's words to the model only; a late or malformed
            # answer is the plugin's fault and the person hears of it once.
            if isinstance(exc, (BadAnswer, DeadlinePassed)):
                kind = "shape" if isinstance(exc, BadAnswer) else "deadline"
                # A deadline's words name the setting that sets it (its hint).
                said = exc.line() if isinstance(exc, DeadlinePassed) else exc.message
                self._link.fault(f"tool/call {kind} {self._own_name}", f"tool {self._own_name}: {said}")
            raise
        finally:
            unregister()
            unabandon()
            calls.end(call.call_id)
        output = result.output
        return ToolOutput(parts=output.parts, display=self._display(output.display), is_error=output.is_error)

    def _display(self, raw: msgspec.Raw) -> View | None:
        """The answer's View (None for none), or None with one notice when it is not one
        (the parts stay)."""
        try:
            return _VIEW.decode(raw)
        except msgspec.DecodeError as exc:
            self._link.fault(
                f"tool/call display {self._own_name}",
                P.DISPLAY_DROPPED.said(name=self._own_name, error=exc),
            )
            return None


def _send_cancel(conn: Peer, call_id: str) -> None:
    try:
        conn.notify("tool/cancel", ToolCancelParams(call_id=call_id))
    except PluginError:
        pass  # the stream has ended: the pending call is failing with that error already
