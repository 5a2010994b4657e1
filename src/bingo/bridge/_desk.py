"""The run's questions about signing in to a server (INTERFACE §14), asked once a run.

Its own module, apart from the HTTP transport that finds a sign-in is needed
(`_mcp_http.py`): the plugin host makes one desk for every run, with or without a server
that could ask, and a run with no plugin imports nothing of the transports (ADR-0043).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

__all__ = ["Ask", "SignInDesk"]

Ask = Callable[[str, list[str] | None], Awaitable[str]]
"""A question to the person with its choices; raises GateError when nobody answers."""


class SignInDesk:
    """The run's questions about signing in (INTERFACE §14): on a terminal, a server that
    needs a sign-in is asked about once a run, outside the start that found it needs one (a
    person's sign-in outlives a handshake's deadline); the question waits until the
    terminal can ask it. Where the run is not interactive nothing is asked."""

    __slots__ = ("_asked", "_ask", "_pending", "_spawn", "_tasks", "interactive")

    def __init__(self, spawn: Callable[[Coroutine[Any, Any, None]], asyncio.Task[None]]) -> None:
        self.interactive = False
        self._spawn = spawn
        self._ask: Ask | None = None
        self._asked: set[str] = set()
        self._pending: list[Callable[[Ask], Coroutine[Any, Any, None]]] = []
        self._tasks: set[asyncio.Task[None]] = set()

    def offer(self, name: str, sign_in: Callable[[Ask], Coroutine[Any, Any, None]]) -> bool:
        """Ask about server `name` (once a run) with `sign_in`; whether it will be asked."""
        if not self.interactive or name in self._asked:
            return False
        self._asked.add(name)
        if self._ask is None:
            self._pending.append(sign_in)
        else:
            self._start(sign_in(self._ask))
        return True

    def listen(self, ask: Ask) -> None:
        """The person can be asked through `ask` from now on (the questions kept are put)."""
        self._ask = ask
        pending, self._pending = self._pending, []
        for sign_in in pending:
            self._start(sign_in(ask))

    def close(self) -> None:
        """The run ends: a sign-in still waiting for its browser is abandoned."""
        self._pending.clear()
        for task in list(self._tasks):
            task.cancel()

    def _start(self, coro: Coroutine[Any, Any, None]) -> None:
        task = self._spawn(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
