"""The bridged provider: the kernel's `Provider`, whose `stream` is `provider/stream`.

Owns the streaming contract: `provider/delta` notifications for this call's streamId go to
`on_delta` as they arrive; the deadline is between messages (reset on every delta);
cancelling the caller's task sends `provider/cancel` and re-raises; every failure is a
ProviderError, the error the kernel's interface already speaks. The kernel knows the
provider as `plugin__<plugin>__<name>`; the wire uses the declared name.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from ..kernel.errors import PluginError, ProviderError
from ..wire import (
    Delta,
    ModelRequest,
    ModelResponse,
    ProviderCancelParams,
    ProviderSpec,
    ProviderStreamParams,
    ProviderStreamResult,
)
from ._link import Ended, Link, Peer
from ._names import bridged_name

__all__ = ["BridgedProvider"]


class BridgedProvider:
    """A plugin's model provider, as the kernel sees it."""

    def __init__(self, link: Link, declared: ProviderSpec) -> None:
        self._link = link
        self._own_name = declared.name
        self._spec = ProviderSpec(
            name=bridged_name(link.name, declared.name),
            description=declared.description,
            models=list(declared.models),
        )
        self._source = link.name

    @property
    def spec(self) -> ProviderSpec:
        return self._spec

    @property
    def source(self) -> str:
        return self._source

    async def stream(self, request: ModelRequest, on_delta: Callable[[Delta], None]) -> ModelResponse:
        """One model response, its chunks passed to `on_delta` as they arrive.

        Raises:
            ProviderError: the plugin failed, died, or was silent past the deadline.
        """
        try:
            conn = await self._link.connection()
        except PluginError as exc:
            raise ProviderError(exc.message, exc.hint) from exc
        calls = self._link.calls
        stream_id = calls.stream_id()
        gap = conn.deadline("provider/stream")
        loop = asyncio.get_running_loop()
        params = ProviderStreamParams(id=self._own_name, stream_id=stream_id, request=request)
        try:
            async with asyncio.timeout(gap) as timer:

                def delta(chunk: Delta) -> None:
                    timer.reschedule(loop.time() + gap)
                    on_delta(chunk)

                calls.streams[stream_id] = delta
                # The deadline is between messages, so the timer above is the one: none per call.
                result = await conn.call("provider/stream", params, ProviderStreamResult, deadline=None)
        except TimeoutError:
            _cancel(conn, stream_id)
            raise ProviderError(
                f"{self._spec.name} sent nothing for {gap:g} s",
                "raise deadlines.provider/stream in settings if the model needs longer",
            ) from None
        except asyncio.CancelledError:
            _cancel(conn, stream_id)
            raise
        except Ended as exc:
            # A death had its notice when the process stopped, its last words quoted there:
            # the failed call says how it ended, and not those words again.
            unsaid = exc.unsaid()
            raise ProviderError(unsaid.message, unsaid.hint) from exc
        except PluginError as exc:
            raise ProviderError(exc.message, exc.hint) from exc
        finally:
            calls.streams.pop(stream_id, None)
        return result.response


def _cancel(conn: Peer, stream_id: str) -> None:
    try:
        conn.notify("provider/cancel", ProviderCancelParams(stream_id=stream_id))
    except PluginError:
        pass  # the stream has ended: nothing is streaming any more
