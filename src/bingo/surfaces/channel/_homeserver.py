"""The few calls of the Matrix client-server API a bot needs, over httpx (ADR-0023).

Owns the HTTP side of the channel: `whoami` (the token's check), `join`,
`joined_members` (who reads the room), `sync` (a long poll), `send` (PUT with the caller's transaction id, so a retried send is one message: the
homeserver answers a repeated transaction id with the event it already made). A request
that fails for a reason that passes (no connection, a timeout, 5xx, 429) is tried again with
backoff until it goes through or the task is cancelled; the first failure of an outage is
one log line and `on_down`, the first success after it `on_up` with the outage's length.
What does not pass (401: the token is wrong) is a SettingsError; anything else the server
refuses is a `Refusal` naming its errcode.

The access token goes in the Authorization header only: never in a URL, so never in
httpx's request log line, and never in an error or log line of ours.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING
from urllib.parse import quote

from ...kernel.errors import BingoError, SettingsError
from ...wire import Json, is_object

if TYPE_CHECKING:
    import httpx

__all__ = ["Homeserver", "Refusal"]

_log = logging.getLogger(__name__)

SYNC_TIMEOUT_MS = 30_000
"""How long one /sync waits on the homeserver for something to happen."""
BACKOFF_FIRST = 0.5
BACKOFF_MOST = 15.0
"""Seconds between tries while the homeserver is away: doubling from the first to the most."""

_SYNC_FILTER = json.dumps(
    {
        "presence": {"types": []},
        "account_data": {"types": []},
        "room": {
            "timeline": {"types": ["m.room.message", "m.room.encrypted", "m.room.member"], "limit": 100},
            "state": {"types": ["m.room.member"]},
            "ephemeral": {"types": []},
            "account_data": {"types": []},
        },
    },
    separators=(",", ":"),
)
"""The rooms' messages, and who joins and leaves (who reads what the bot says: ADR-0029);
typing and receipts are nothing a bot answers."""


class Refusal(BingoError):
    """The homeserver refused a request for a reason that does not pass (not 401, 429 or 5xx)."""


def _path(*parts: str) -> str:
    return "/".join(quote(part, safe="") for part in parts)


class Homeserver:
    """One account's session with one homeserver. `aclose` when done."""

    def __init__(
        self,
        base: str,
        token: str,
        *,
        on_down: Callable[[str], None] | None = None,
        on_up: Callable[[float], None] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        import httpx

        # httpx logs each request at INFO: a line per long poll would fill bingo's log.
        logging.getLogger("httpx").setLevel(logging.WARNING)
        self.base = base.rstrip("/")
        self._http = httpx.AsyncClient(
            base_url=self.base + "/_matrix/client/v3/",
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx.Timeout(20.0, read=SYNC_TIMEOUT_MS / 1000 + 20.0),
            transport=transport,
        )
        self._on_down = on_down
        self._on_up = on_up
        self._sleep = sleep
        self._down_since: float | None = None

    async def aclose(self) -> None:
        await self._http.aclose()

    @property
    def down(self) -> bool:
        """True while the homeserver is away (between a failure and the next success)."""
        return self._down_since is not None

    async def _request(
        self, method: str, path: str, *, body: Json = None, params: Mapping[str, str] | None = None, retry: bool = True
    ) -> dict[str, Json]:
        """The JSON object the homeserver answers; tried again while the failure passes."""
        import httpx

        wait = BACKOFF_FIRST
        while True:
            why: str
            try:
                response = await self._http.request(method, path, json=body, params=params)
            except httpx.TransportError as exc:
                why = f"cannot reach {self.base} ({type(exc).__name__})"
            else:
                status = response.status_code
                if status < 300:
                    self._back()
                    try:
                        data: Json = response.json()
                    except ValueError:
                        data = None
                    return data if is_object(data) else {}
                errcode, error = _error(response)
                if status == 401:
                    raise SettingsError(
                        f"the homeserver {self.base} refused the access token ({errcode})",
                        "give the bot a valid access token in the variable accessTokenEnv names",
                    )
                if status == 429:  # not away: busy; wait as long as it asks
                    self._back()
                    retry_ms = _retry_after(response)
                    await self._sleep(retry_ms / 1000 if retry_ms is not None else wait)
                    wait = min(wait * 2, BACKOFF_MOST)
                    continue
                if status < 500:
                    self._back()
                    raise Refusal(
                        f"the homeserver refused {method} {path.split('?')[0]}: {errcode} {error}".rstrip(),
                        "check the room ids and the bot's membership",
                    )
                else:
                    why = f"{self.base} answered {status}"
            if not retry:
                raise Refusal(why, "check that the homeserver runs and its URL")
            self._away(why)
            await self._sleep(wait)
            wait = min(wait * 2, BACKOFF_MOST)

    def _away(self, why: str) -> None:
        if self._down_since is None:
            self._down_since = time.monotonic()
            _log.warning("homeserver away: %s; trying again with backoff", why)
            if self._on_down is not None:
                self._on_down(why)

    def _back(self) -> None:
        if self._down_since is not None:
            seconds = time.monotonic() - self._down_since
            self._down_since = None
            _log.warning("homeserver back after %.1f s", seconds)
            if self._on_up is not None:
                self._on_up(seconds)

    async def whoami(self) -> str:
        """The user id the token belongs to (one try: a homeserver that is not there at
        start is a mistake in the settings, said at once)."""
        data = await self._request("GET", "account/whoami", retry=False)
        user = data.get("user_id")
        return user if isinstance(user, str) else ""

    async def join(self, room: str) -> str:
        """Join `room` (an id or an alias); the room's id."""
        data = await self._request("POST", "join/" + _path(room), body={})
        joined = data.get("room_id")
        return joined if isinstance(joined, str) else room

    async def sync(self, since: str | None, *, timeout_ms: int = SYNC_TIMEOUT_MS) -> dict[str, Json]:
        params = {"filter": _SYNC_FILTER, "timeout": str(timeout_ms)}
        if since is not None:
            params["since"] = since
        return await self._request("GET", "sync", params=params)

    async def joined_members(self, room: str) -> set[str]:
        """The user ids joined to `room` now (the bot's own included)."""
        data = await self._request("GET", "rooms/" + _path(room, "joined_members"))
        joined = data.get("joined")
        return {user for user in joined} if is_object(joined) else set()

    async def send(self, room: str, txn_id: str, content: dict[str, Json]) -> str:
        """Send an `m.room.message`; the event's id. The same `txn_id` again is the same
        message (the homeserver's idempotency), so a retry never sends it twice."""
        data = await self._request("PUT", "rooms/" + _path(room, "send", "m.room.message", txn_id), body=content)
        event = data.get("event_id")
        return event if isinstance(event, str) else ""


def _error(response: httpx.Response) -> tuple[str, str]:
    try:
        data: Json = response.json()
    except ValueError:
        return f"HTTP {response.status_code}", ""
    if not is_object(data):
        return f"HTTP {response.status_code}", ""
    code, error = data.get("errcode"), data.get("error")
    return (code if isinstance(code, str) else f"HTTP {response.status_code}"), (
        error[:200] if isinstance(error, str) else ""
    )


def _retry_after(response: httpx.Response) -> float | None:
    try:
        data: Json = response.json()
    except ValueError:
        return None
    value = data.get("retry_after_ms") if is_object(data) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
