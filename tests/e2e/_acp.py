"""An ACP client nobody here wrote, driving the real `bingo --acp`: the Python
`agent-client-protocol` package's client side, with a recording `Client` whose answers to
permission requests and file reads each test scripts."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import acp
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    AvailableCommandsUpdate,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UserMessageChunk,
    WriteTextFileResponse,
)

from tests.e2e._bingo import BINGO, Sandbox

WAIT = 20.0
"""No single exchange with bingo may take longer."""


@dataclass
class Recorder:
    """The client: every update it is sent, and its scripted answers."""

    answers: list[str] = field(default_factory=lambda: [])
    """Option kinds to choose, in order (`allow_once`, `allow_always`, `reject_once`), or
    `cancelled`; past them a request is cancelled."""
    files: dict[str, str] | None = None
    """The editor's buffers by path, when it offers fs; writes land here."""
    updates: list[tuple[str, Any]] = field(default_factory=lambda: [])
    asked: list[tuple[ToolCallUpdate, list[PermissionOption]]] = field(default_factory=lambda: [])
    asked_event: asyncio.Event = field(default_factory=asyncio.Event)
    updated: asyncio.Event = field(default_factory=asyncio.Event)
    """Set at each update."""
    hold: asyncio.Event | None = None
    """When set, a permission request waits for this before it is answered."""
    declined: frozenset[str] = frozenset()
    """Paths the editor refuses to read or write (outside its project, say)."""

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.asked.append((tool_call, options))
        self.asked_event.set()
        if self.hold is not None:
            await self.hold.wait()
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        kind = self.answers.pop(0) if self.answers else "cancelled"
        chosen = next((o for o in options if o.kind == kind), None)
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=chosen.option_id))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        self.updated.set()

    async def said(self, words: str) -> None:
        """Return once a notice holds `words`; the caller bounds the wait."""
        while words not in self.notice_text():
            self.updated.clear()
            await self.updated.wait()

    async def agent_said(self, words: str) -> None:
        """Return once the agent's text holds `words` (an update may be handled after the
        answer to the request that caused it); the caller bounds the wait."""
        while words not in self.agent_text():
            self.updated.clear()
            await self.updated.wait()

    async def notice_said(self, words: str) -> None:
        """Return once bingo's own lines (`notices`) hold `words`; the caller bounds the wait."""
        while words not in self.notice_text():
            self.updated.clear()
            await self.updated.wait()

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse | None:
        assert self.files is not None
        if path in self.declined:
            raise acp.RequestError(-32603, f"{path} is not in this project")
        self.files[path] = content
        return WriteTextFileResponse()

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        assert self.files is not None
        if path in self.declined:
            raise acp.RequestError(-32603, f"{path} is not in this project")
        if path not in self.files:
            raise acp.RequestError(-32002, f"no such file {path}")
        return ReadTextFileResponse(content=self.files[path])

    def on_connect(self, conn: Any) -> None:
        return None

    # bingo asks for none of these (it offers no terminal, and none is offered it here)
    async def create_terminal(self, *args: Any, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("terminal/create")

    async def terminal_output(self, *args: Any, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("terminal/output")

    async def release_terminal(self, *args: Any, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("terminal/release")

    async def wait_for_terminal_exit(self, *args: Any, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("terminal/wait_for_exit")

    async def kill_terminal(self, *args: Any, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("terminal/kill")

    async def create_elicitation(self, *args: Any, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("elicitation/create")

    async def complete_elicitation(self, *args: Any, **kwargs: Any) -> None:
        return None

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    # --- what was sent ------------------------------------------------------------

    def agent_text(self) -> str:
        return "".join(
            u.content.text
            for _, u in self.updates
            if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContentBlock)
        )

    def notices(self) -> list[str]:
        """bingo's own lines, as a client that does not take `notice` updates is sent them:
        call cards of their own marked `_meta.bingo.notice` (ADR-0037), never message text."""
        return [
            u.title
            for _, u in self.updates
            if isinstance(u, ToolCallStart) and ((u.field_meta or {}).get("bingo") or {}).get("notice")
        ]

    def notice_text(self) -> str:
        return "\n".join(self.notices())

    def user_text(self) -> str:
        return "".join(
            u.content.text
            for _, u in self.updates
            if isinstance(u, UserMessageChunk) and isinstance(u.content, TextContentBlock)
        )

    def calls(self) -> list[ToolCallStart | ToolCallProgress]:
        return [u for _, u in self.updates if isinstance(u, (ToolCallStart, ToolCallProgress))]

    def statuses(self, call_id: str) -> list[str]:
        return [str(u.status) for u in self.calls() if u.tool_call_id == call_id and u.status is not None]

    def commands(self) -> list[str]:
        found = [u for _, u in self.updates if isinstance(u, AvailableCommandsUpdate)]
        return [c.name for c in found[-1].available_commands] if found else []


@contextlib.asynccontextmanager
async def connected(box: Sandbox, client: Recorder, *args: str) -> AsyncIterator[ClientSideConnection]:
    """`bingo --acp` started in the sandbox's project, initialized, as a connection."""
    async with acp.spawn_agent_process(client, BINGO, "--acp", *args, env=box.env, cwd=box.project) as (conn, _process):
        fs = (
            FileSystemCapabilities(read_text_file=True, write_text_file=True)
            if client.files is not None
            else FileSystemCapabilities()
        )
        async with asyncio.timeout(WAIT):
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION, client_capabilities=ClientCapabilities(fs=fs))
        yield conn


def text(value: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=value)


def project_path(box: Sandbox, name: str) -> str:
    return str(Path(box.project) / name)
