"""The bridged compactor: the kernel's `Compactor`, whose `compact` is `compactor/compact`.

Every failure (not running, an error answer, a death) is the error the kernel's interface
already speaks, CompactionError, and the history stays as it was. Its deadline is the
kernel's: the turn bounds every compaction by `compactor/compact`'s; the call sets no timer
of its own, so it is enforced once. The
kernel knows it as `plugin__<plugin>__<name>`; the wire uses the declared name.
"""

from __future__ import annotations

from typing import Literal

from ..kernel.errors import CompactionError, PluginError
from ..wire import Compaction, CompactionContext, CompactorSpec, CompactParams, CompactResult
from ._link import Link
from ._names import bridged_name

__all__ = ["BridgedCompactor"]


class BridgedCompactor:
    """A plugin's compaction strategy, as the kernel sees it."""

    def __init__(self, link: Link, declared: CompactorSpec) -> None:
        self._link = link
        self._own_name = declared.name
        self._spec = CompactorSpec(name=bridged_name(link.name, declared.name), description=declared.description)
        self._source = link.name

    @property
    def spec(self) -> CompactorSpec:
        return self._spec

    @property
    def source(self) -> str:
        return self._source

    async def compact(self, context: CompactionContext, reason: Literal["overflow", "manual"]) -> Compaction:
        """The history that replaces `context`.

        Raises:
            CompactionError: the plugin could not compact; the history stays as it was.
        """
        try:
            conn = await self._link.connection()
            result = await conn.call(
                "compactor/compact",
                CompactParams(id=self._own_name, context=context, reason=reason),
                CompactResult,
                deadline=None,  # the turn cancels a compaction past compactor/compact's
            )
        except PluginError as exc:
            raise CompactionError(exc.message, exc.hint) from exc
        return result.compaction
