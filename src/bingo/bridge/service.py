"""Services across the wire, both ways.

Owns `BridgedService` (the kernel's `Service`, host → plugin: `service/call` for its key),
`ServiceRouter` (plugin → host: a plugin's `service/call` routed by key to the registry's
services, another plugin's proxy or the host's own) and the reserved `bingo.host` key with
its two doors: `ask` (a question to the person, on a call the plugin is running now) and
`notice` (one line under the plugin's name). It does not decide who keeps a contested key:
the registry's first-wins rule does, and the host registers in plugin-name order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

import msgspec

from ..endpoint import Connection
from ..kernel.errors import BadParams, GateError, MethodNotFound, Refused
from ..kernel.notices import Notices
from ..kernel.registry import BUILTIN, Registry
from ..wire import (
    HOST_SERVICE_KEY,
    AskParams,
    AskResult,
    EmptyResult,
    HostNoticeParams,
    Json,
    ServiceCallParams,
    ServiceCallResult,
    ServiceSpec,
    Wire,
)
from ._link import Calls, Link
from ._names import asked_by

__all__ = ["HOST_SPEC", "BridgedService", "HostService", "ServiceRouter"]

HOST_SPEC = ServiceSpec(
    key=HOST_SERVICE_KEY,
    methods=["ask", "notice"],
    description="The host's own doors: ask the person on a running call, or say a notice.",
)


class BridgedService:
    """A plugin's service, as the kernel (and other plugins) see it."""

    def __init__(self, link: Link, spec: ServiceSpec) -> None:
        self._link = link
        self._spec = spec
        self._source = link.name

    @property
    def spec(self) -> ServiceSpec:
        return self._spec

    @property
    def source(self) -> str:
        return self._source

    async def call(self, method: str, params: Json) -> Json:
        """Call `method` of the plugin's service.

        Raises:
            PluginError: the call failed, was late, or the plugin is not running.
        """
        conn = await self._link.connection()
        result = await conn.call(
            "service/call",
            ServiceCallParams(key=self._spec.key, method=method, params=params),
            ServiceCallResult,
        )
        return result.result


class HostService:
    """`bingo.host` as registered in the registry, so no one else can hold the key. Its
    doors need a calling plugin, so in-process callers are refused; plugins reach it through
    the ServiceRouter."""

    @property
    def spec(self) -> ServiceSpec:
        return HOST_SPEC

    @property
    def source(self) -> str:
        return BUILTIN  # bingo's own: the registry reserves `bingo.` keys for it

    async def call(self, method: str, params: Json) -> Json:
        raise Refused(f"{HOST_SERVICE_KEY} answers plugins only")


class ServiceRouter:
    """Answers the `service/call` requests plugins send to the host."""

    def __init__(self, registry: Registry, notices: Notices, books: Mapping[str, Calls]) -> None:
        self._registry = registry
        self._notices = notices
        self._books = books

    def install(self, conn: Connection, plugin: str) -> None:
        """Answer `plugin`'s `service/call` requests arriving on `conn`."""

        async def handle(params: ServiceCallParams) -> ServiceCallResult:
            return ServiceCallResult(result=await self.route(plugin, params))

        conn.on_request("service/call", ServiceCallParams, handle)

    async def route(self, plugin: str, params: ServiceCallParams) -> Json:
        """The result of `plugin`'s call of `params.key`.

        Raises:
            MethodNotFound: no such key or method.
            Refused: the host refused (an `ask` off a call the plugin is running, or with
                nobody to ask).
            BadParams: the params of a `bingo.host` method have the wrong shape.
            PluginError: the service refused or failed.
        """
        if params.key == HOST_SERVICE_KEY:
            return await self._host(plugin, params.method, params.params)
        service = self._registry.services.get(params.key)
        if service is None:
            raise MethodNotFound(f"no service is registered under {params.key!r}")
        return await service.call(params.method, params.params)

    async def _host(self, plugin: str, method: str, params: Json) -> Wire:
        if method == "ask":
            return await self._ask(plugin, _convert(params, AskParams))
        if method == "notice":
            notice = _convert(params, HostNoticeParams)
            self._notices.say(plugin, notice.message, notice.level)
            return EmptyResult()
        raise MethodNotFound(f"{HOST_SERVICE_KEY} has no method {method!r}")

    async def _ask(self, plugin: str, params: AskParams) -> AskResult:
        book = self._books.get(plugin)
        call = book.tools.get(params.call) if book is not None else None
        if call is None:
            if any(params.call in other.tools for name, other in self._books.items() if name != plugin):
                why = f"call {params.call} is not yours: it is another plugin's call"
            elif book is not None and params.call in book.ended:
                why = f"call {params.call} has ended: ask only during a call you are running"
            else:
                why = f"call {params.call} is not a call you are running"
            self._notices.say_once(plugin, "ask-refused", f"bingo.host ask was refused: {why}", "warning")
            raise Refused(why)
        try:
            answer = await call.ask(asked_by("plugin", plugin, params.question), params.choices)
        except GateError:
            raise Refused("no person to ask") from None
        return AskResult(answer=answer)


W = TypeVar("W", bound=Wire)


def _convert(params: Json, kind: type[W]) -> W:
    try:
        return msgspec.convert(params, kind)
    except msgspec.ValidationError as exc:
        raise BadParams(f"bad params: {exc}") from exc
