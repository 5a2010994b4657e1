"""The bridged context contributor: the kernel's `ContextContributor`, whose `contribute`
is `context/contribute {id, query}`.

The query crosses as its projection (`ContextQuery`): an external contributor reads the
query, never the host. A failure raises PluginError, which the kernel turns into "dropped
from this round" with a notice; a plugin that is not running answers nothing, quietly (its
stop was already said once). Its deadline is the kernel's: the turn bounds every
contributor by `context/contribute`'s and says it was missed; the call sets no timer of its
own, so it is enforced once.
"""

from __future__ import annotations

from ..wire import ContextPiece, ContextQuery, ContributeParams, ContributeResult, ContributorSpec
from ._link import Link, Unavailable

__all__ = ["BridgedContributor"]


class BridgedContributor:
    """A plugin's context contributor, as the kernel sees it."""

    def __init__(self, link: Link, spec: ContributorSpec) -> None:
        self._link = link
        self._spec = spec
        self._source = link.name

    @property
    def spec(self) -> ContributorSpec:
        return self._spec

    @property
    def source(self) -> str:
        return self._source

    async def contribute(self, query: ContextQuery) -> list[ContextPiece]:
        """The plugin's pieces for this turn.

        Raises:
            PluginError: the call failed.
        """
        try:
            conn = await self._link.connection()
        except Unavailable:
            return []
        result = await conn.call(
            "context/contribute",
            ContributeParams(id=self._spec.name, query=query),
            ContributeResult,
            deadline=None,  # the turn cancels a contributor past context/contribute's
        )
        return result.pieces
