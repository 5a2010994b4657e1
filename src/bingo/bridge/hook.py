"""The bridged hook: the kernel's `Hook`, whose `decide` is `hook/decide` and whose
`observe` is the `hook/observe` notification.

A failure or an answer outside the five outcomes (`allow` included) raises PluginError,
which the kernel's Hooks turns into "decides nothing" and a notice. Its deadline is the
kernel's: Hooks bounds every hook's decision by `hook/decide`'s, a plugin's as an in-process
one's, and says it was missed; the call sets no timer of its own, so it is enforced once. A
plugin that is not running raises PluginUnavailable, which Hooks lets decide nothing quietly
(or answer `ask`, for a plugin in `hooks.failClosed`), and observes nothing; an observation
never respawns a plugin, since nothing waits on it.
"""

from __future__ import annotations

from ..kernel.errors import PluginError
from ..wire import HookDecideParams, HookObserveParams, HookOutcome, HookSpec, Json
from ._link import Link

__all__ = ["BridgedHook"]


class BridgedHook:
    """A plugin's hook, as the kernel sees it."""

    def __init__(self, link: Link, spec: HookSpec) -> None:
        self._link = link
        self._spec = spec
        self._source = link.name

    @property
    def spec(self) -> HookSpec:
        return self._spec

    @property
    def source(self) -> str:
        return self._source

    async def decide(self, point: str, payload: Json) -> HookOutcome:
        """The plugin's decision at `point`.

        Raises:
            PluginUnavailable: the plugin is not running, so it was not asked.
            PluginError: the call failed, or answered something not a decision.
        """
        conn = await self._link.connection()
        params = HookDecideParams(id=self._spec.name, site=self._spec.site, point=point, payload=payload)
        # No deadline here: the kernel's Hooks cancels a decision past hook/decide's.
        return await conn.call("hook/decide", params, HookOutcome, deadline=None)

    async def observe(self, point: str, payload: Json) -> None:
        """Tell the plugin about an observation point, if it is running."""
        conn = self._link.current()
        if conn is None:
            return
        params = HookObserveParams(id=self._spec.name, site=self._spec.site, point=point, payload=payload)
        try:
            conn.notify("hook/observe", params)
        except PluginError:
            pass  # it just stopped; its stop has its own notice
