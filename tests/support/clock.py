"""A virtual clock for asyncio tests whose deadline is under test.

`run` runs a coroutine on an event loop whose `time()` is a virtual clock: it starts at 0
and moves only when every task is waiting and the next thing due is a timer, and then it
jumps straight to that timer. Every asyncio deadline (`asyncio.timeout`, `wait_for`,
`sleep`, `call_at`, `asyncio.wait(timeout=)`) reads the loop's clock, so a test of a
0.15 s deadline takes no time, never races a loaded machine, and can assert exactly when
the deadline passed: `asyncio.get_running_loop().time()` is the virtual now.

For tests whose I/O is all in memory (the twins). Anything outside the loop (a thread, a
child process, a socket) does not hold the clock back: waiting on it, the clock would
jump to the next timer, so such a test stays on the real clock.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine, Mapping
from typing import Any, TypeVar

__all__ = ["VirtualLoop", "run"]

T = TypeVar("T")


class _Jumping(selectors.BaseSelector):
    """The loop's selector: I/O that is ready comes back at once; otherwise, instead of
    blocking until the next timer is due, the clock moves to it."""

    def __init__(self) -> None:
        self._real = selectors.DefaultSelector()
        self.now = 0.0

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._real.unregister(fileobj)

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.modify(fileobj, events, data)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = self._real.select(0)
        if ready or timeout == 0:
            return ready
        if timeout is None:
            # Nothing is scheduled: only the outside (another thread's call_soon_threadsafe)
            # can wake the loop, so wait for it for real.
            return self._real.select(None)
        self.now += timeout
        return []

    def get_map(self) -> Mapping[Any, selectors.SelectorKey]:
        return self._real.get_map()

    def close(self) -> None:
        self._real.close()


class VirtualLoop(asyncio.SelectorEventLoop):
    """An event loop on the virtual clock (see the module docstring)."""

    def __init__(self) -> None:
        self._jumping = _Jumping()
        super().__init__(self._jumping)

    def time(self) -> float:
        return self._jumping.now


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)`, on a VirtualLoop."""
    with asyncio.Runner(loop_factory=VirtualLoop) as runner:
        return runner.run(main)
