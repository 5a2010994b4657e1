"""`--max-turns N`: at most N model requests in the run (INTERFACE.md §13).

Owns counting a run's model requests: the run's model choice is wrapped (`TurnLimit`, a
`ChooseModel` the factory hands the run), and the provider it gives counts each request
and refuses the one past N with a ProviderError, which ends the turn as any provider
failure does. A compaction's summary is a model request too, and is counted, and so is a
child conversation's (a subagent's: the child asks the run's model choice for its
provider). Each response is priced as it arrives, at the model its request named
(`cost`): a child on another model than its parent's costs that model's price. It does not
decide what the output says (the surface does).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ...kernel.dispatch import ChooseModel
from ...kernel.errors import ProviderError
from ...kernel.interfaces import Provider
from ...wire import Delta, ModelRequest, ModelResponse, ProviderSpec, Usage

__all__ = ["TurnLimit"]


class TurnLimit:
    """The run's model choice, counting its requests; `limit` None counts without limit."""

    __slots__ = ("_choose", "_dollars", "_priceless", "api_seconds", "exceeded", "limit", "requests")

    def __init__(self, choose: ChooseModel, limit: int | None) -> None:
        self._choose = choose
        self.limit = limit
        self.requests = 0
        """Model requests made (the output's `num_turns`)."""
        self.exceeded = False
        """A request past the limit was refused."""
        self.api_seconds = 0.0
        """Time spent waiting for the model's responses (the output's `duration_api_ms`)."""
        self._dollars: float | None = None
        """What the responses so far cost; None before the first or once one was priceless."""
        self._priceless = False

    def __call__(self) -> tuple[Provider, str]:
        provider, model = self._choose()
        return _Counted(provider, self), model

    @property
    def cost(self) -> float | None:
        """What the responses cost in US dollars, each at its own model's price (the output's
        `total_cost_usd`); None before any response, or once one came from a model with no
        known price (a plugin's, or one the built-in providers' table does not list)."""
        return None if self._priceless else self._dollars

    def spent(self, provider: Provider, model: str, usage: Usage | None) -> None:
        """Price one response of `model` from `provider` (its usage as the provider said)."""
        from ...kernel.registry import BUILTIN

        if self._priceless:
            return
        if provider.source != BUILTIN:
            self._priceless = True
            return
        from ...providers import cost_usd

        dollars = cost_usd(provider.spec.name, model, usage or Usage())
        if dollars is None:
            self._priceless = True
        else:
            self._dollars = round((self._dollars or 0.0) + dollars, 10)

    def take(self) -> None:
        """Count one request, or refuse it past the limit.

        Raises:
            ProviderError: the run has made `limit` requests already.
        """
        if self.limit is not None and self.requests >= self.limit:
            self.exceeded = True
            many = "request" if self.limit == 1 else "requests"
            raise ProviderError(
                f"the run reached --max-turns {self.limit} ({self.limit} model {many}) before the model finished",
                "raise --max-turns, or ask for less",
            )
        self.requests += 1


class _Counted:
    """A provider whose every request is counted first (a `Provider`)."""

    __slots__ = ("_inner", "_limit")

    def __init__(self, inner: Provider, limit: TurnLimit) -> None:
        self._inner = inner
        self._limit = limit

    @property
    def spec(self) -> ProviderSpec:
        return self._inner.spec

    @property
    def source(self) -> str:
        return self._inner.source

    async def stream(self, request: ModelRequest, on_delta: Callable[[Delta], None]) -> ModelResponse:
        self._limit.take()
        started = time.monotonic()
        try:
            response = await self._inner.stream(request, on_delta)
        finally:
            self._limit.api_seconds += time.monotonic() - started
        self._limit.spent(self._inner, request.model, response.usage)
        return response
