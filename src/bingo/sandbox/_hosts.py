"""Which hosts a confined process may reach through the proxy (INTERFACE.md §9).

Owns the decision the proxy asks for each request: a host granted to every process
(`sandbox.network.allow`) or to this one (`plugins.<name>.sandbox.network`, what its launcher
needs) passes; any other is asked about on a terminal (`bash wants to reach pypi.org:443`,
`[y] once` (this run), `[a] always` (saved, `remember`), `[n]`), one question per host at a time however
many requests wait on it; where nobody can be asked it is refused with one line naming the
host and the setting that grants it. It does not speak HTTP (the proxy does).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable

from ..kernel.errors import GateError
from ..kernel.notices import Notices

__all__ = ["Hosts", "AskHost"]

AskHost = Callable[[str, list[str]], Awaitable[str]]
"""The person's question (the Asker's `ask`): GateError when nobody can answer."""

_CHOICES = ["yes", "always", "no"]
"""A host's answers: a terminal takes them by their first letters (y, a, n)."""


class Hosts:
    """The run's host decisions: what is granted, what was answered this run."""

    def __init__(
        self,
        granted: Iterable[str],
        *,
        notices: Notices,
        user_settings: str,
        local_settings: str,
        ask: AskHost | None = None,
        remember: Callable[[str, str], None] | None = None,
    ) -> None:
        self._granted = list(granted)
        self._own: dict[str, list[str]] = {}
        self._answered: dict[tuple[str, str], bool] = {}
        self._asking: dict[tuple[str, str], asyncio.Future[bool]] = {}
        self._notices = notices
        self._user_settings = user_settings
        self._local_settings = local_settings
        self.ask = ask
        """Set by the surface that has a person (the terminal); None: nobody to ask."""
        self.remember = remember
        """Told (who, host) for an "always": saves the grant for the next runs."""

    def grant(self, who: str, hosts: Iterable[str]) -> None:
        """Grant `hosts` to `who` alone (a plugin's own, its launcher's)."""
        self._own.setdefault(who, []).extend(hosts)

    def granted(self, who: str, host: str) -> bool:
        """Whether `host` is granted to `who` (patterns canonical, as `_pattern.parse_pattern`
        gives them)."""
        from ._pattern import host_matches, parse_host  # when a process first reaches out

        try:
            canonical = parse_host(host)
        except ValueError:
            return False
        return host_matches(canonical, (*self._granted, *self._own.get(who, ())))

    def refusal(self, who: str) -> Callable[[str, int], str]:
        """The line the proxy answers a refused request of `who`'s with (its 403)."""

        def line(host: str, port: int) -> str:
            from ._pattern import shown

            return (
                f"bingo's sandbox refused {who} a connection to {shown(host)}:{port}: grant it in {self._setting(who)}"
            )

        return line

    @staticmethod
    def _setting(who: str) -> str:
        return "sandbox.network.allow" if who == "bash" else f"plugins.{who}.sandbox.network (or sandbox.network.allow)"

    def decider(self, who: str) -> Callable[[str, int], Awaitable[bool]]:
        """The proxy's callback for `who`'s requests: True to pass one to `host`:`port`."""

        async def decide(host: str, port: int) -> bool:
            return await self.decide(who, host, port)

        return decide

    async def decide(self, who: str, host: str, port: int) -> bool:
        """Whether `who` may reach `host`:`port` now (asking the person when it is no grant)."""
        if self.granted(who, host):
            return True
        key = (who, host.lower())
        if key in self._answered:
            return self._answered[key]
        waiting = self._asking.get(key)
        if waiting is not None:
            return await asyncio.shield(waiting)
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._asking[key] = future
        try:
            passed = await self._ask(who, host, port)
            future.set_result(passed)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: the waiters, if any, see it
            raise
        finally:
            del self._asking[key]
        return passed

    async def _ask(self, who: str, host: str, port: int) -> bool:
        setting = self._setting(who)
        if self.ask is None:
            self._refused(who, host, port, setting)
            return False
        from ._pattern import shown

        question = (
            f"{who} wants to reach {shown(host)}:{port} (yes: this once; always: saved in {self._local_settings})"
        )
        try:
            answer = (await self.ask(question, list(_CHOICES))).strip().lower()
        except GateError:
            self._refused(who, host, port, setting)
            return False
        if answer in ("a", "always"):
            self._granted_always(who, host)
            return True
        if answer in ("y", "yes", "once"):
            # For this run, not saved: a `pip install` opens many connections to one host.
            self._answered[(who, host.lower())] = True
            return True
        self._answered[(who, host.lower())] = False  # a no holds for the run: not asked again
        return False

    def _granted_always(self, who: str, host: str) -> None:
        self.grant(who, [host.lower()])
        if self.remember is not None:
            self.remember(who, host.lower())

    def _refused(self, who: str, host: str, port: int, setting: str) -> None:
        from ._pattern import shown

        self._answered[(who, host.lower())] = False
        self._notices.say_once(
            "bingo",
            f"sandbox-host:{who}:{host.lower()}",
            f"the sandbox refused {who} a connection to {shown(host)}:{port}: it is no granted host and nobody can be asked; "
            f'grant it with {setting} ("{host.lower()}") in {self._user_settings}',
            "warning",
        )
