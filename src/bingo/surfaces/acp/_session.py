"""One ACP session as a bingo surface: what a turn shows, sent as `session/update`; the gate's
and a plugin's questions, put as `session/request_permission`.

Owns what the editor is told of one session. The model's text is an `agent_message_chunk`
per delta, and nothing else is (ADR-0037): bingo's own lines (a notice, a wait, a failed
turn) are ACP's `notice` update to a client that takes them
(`clientCapabilities.session.notices`), else each a `tool_call` card of kind `other` titled
with the line and marked `_meta.bingo.notice`, which every editor draws apart from the
agent's message. A tool call is a `tool_call` when it starts (the gate's question comes first: then
the call is announced `pending` with the question, and the same id goes `in_progress` when
it runs), its live line a `tool_call_update` content, its end the status and the result: a
View as its markdown fold, a diff View as ACP diffs, otherwise the output's text and images
(how a call reads to the editor is `_cards`).
Every string from elsewhere passes `escape` (INTERFACE.md §8) before it is sent.
`session/load` replays a stored session the same way, its prompts as user message chunks
(a prompt's images as images, one past REPLAYED_IMAGE as a line naming it).

A question waits for the client's answer, or for the turn's cancel (`session/cancel`: the
client answers `cancelled` then, and a client that does not is not waited for): either is
a "no". "Allow always" answers `always`, and the kernel adds and saves the narrow rule the
question named (`Run.remember`), as the terminal's "yes, always" does.

It does not read the client (`_serve.py` does and hands it what concerns it), and it knows
nothing of the run behind it beyond the seam a surface meets.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol

from ...kernel.errors import BingoError
from ...kernel.frames import (
    AgentFrame,
    AssistantFrame,
    CompactionFrame,
    Frame,
    NoticeFrame,
    PromptFrame,
    RewindFrame,
    ToolCallFrame,
    ToolResultFrame,
)
from ...kernel.interfaces import PermissionAnswer
from ...kernel.notices import HOST
from ...wire import (
    CommandOutcome,
    ErrorOutcome,
    Json,
    NoneOutcome,
    Notice,
    NoticeLevel,
    PromptOutcome,
    TextOutcome,
    ToolOutput,
    ToolUseBlock,
    ViewOutcome,
)
from ...wire import TextBlock as MessageText
from .._calls import agent_lines
from .._escape import escape, escape_view, one_line
from ._cards import asked, card, key, result_content, title
from ._markdown import markdown
from ._schema import (
    AgentMessageChunk,
    Content,
    ImageBlock,
    NoticeUpdate,
    PermissionOption,
    PermissionParams,
    PermissionResult,
    PermissionToolCall,
    TextBlock,
    ToolCallContent,
    ToolCallStart,
    ToolCallUpdate,
    Update,
    UserMessageChunk,
)

__all__ = ["AcpSession", "Peer"]

_log = logging.getLogger(__name__)

_ONCE, _ALWAYS, _REJECT = "allow-once", "allow-always", "reject"

CHUNK = 8192
"""Characters of text one `agent_message_chunk` carries at most: a long message (a View, a
replayed answer) goes as several, so no one line is more than a client's reader takes (the
Python SDK's is asyncio's 64 KiB unless told otherwise)."""
REPLAYED_IMAGE = 6 * CHUNK
"""Characters of base64 a prompt's image may be to be replayed as itself by `session/load`
(a larger one is a line naming it): a replay is many lines at once, and a client's reader
may take 64 KiB a line and no more."""


def _placeholder(media_type: str, chars: int) -> str:
    return f"[an image ({media_type}, {chars * 3 // 4 // 1024:,} KiB), given to the model]"


def _pieces(text: str) -> list[str]:
    return [text[at : at + CHUNK] for at in range(0, len(text), CHUNK)] or [""]


class Peer(Protocol):
    """What a session needs of the connection to its client."""

    def update(self, session_id: str, update: Update) -> None:
        """Send a `session/update` (never raises: a client gone is the connection's news)."""
        ...

    async def request_permission(self, params: PermissionParams) -> PermissionResult:
        """Ask the client. Raises BingoError when it cannot answer (gone, a bad answer)."""
        ...


class AcpSession:
    """The surface of one ACP session (`Surface`: TurnEvents, Asker, notices and outcomes)."""

    def __init__(self, session_id: str, cwd: str, peer: Peer, *, notices: bool = False) -> None:
        self.id = session_id
        self.cwd = cwd
        self._peer = peer
        self._notices = notices
        """The client takes `notice` updates (else a notice is a call card of its own)."""
        self._said = 0
        self._asked: dict[str, str] = {}
        """Calls the person allowed, by name and input, to the id their question announced."""
        self._running: dict[str, str] = {}
        """The ACP id of each call running now, by bingo's call id."""
        self._progress: dict[str, str] = {}
        self._questions = 0
        self._cancelled: asyncio.Event | None = None

    # --- sending ------------------------------------------------------------------

    def _send(self, update: Update) -> None:
        self._peer.update(self.id, update)

    def _chunk(self, text: str) -> None:
        if text:
            for piece in _pieces(text):
                self._send(AgentMessageChunk(content=TextBlock(text=piece)))

    def say(self, line: str, level: NoticeLevel = "info", source: str = HOST) -> None:
        """One of bingo's own lines (already escaped, its source first), apart from the
        agent's message: a `notice` update, or a call card of its own (ADR-0037)."""
        title = " ".join(line.split("\n"))
        if self._notices:
            self._send(NoticeUpdate(severity=level, title=title))
            return
        self._said += 1
        meta: dict[str, Json] = {"bingo": {"notice": {"source": source, "level": level}}}
        self._send(
            ToolCallStart(
                tool_call_id=f"notice-{self._said}",
                title=title,
                kind="other",
                status="failed" if level == "error" else "completed",
                meta=meta,
            )
        )

    def _start(
        self, acp_id: str, name: str, input: Json, status: str, content: list[ToolCallContent] | None = None
    ) -> None:
        self._send(card(acp_id, name, input, status, content, self.cwd))

    # --- the prompt's life ----------------------------------------------------------

    def begin(self) -> None:
        """A prompt starts: its questions wait until it is cancelled."""
        self._cancelled = asyncio.Event()

    def cancel(self) -> None:
        """The client cancelled the prompt: every question waiting is a "no" now."""
        if self._cancelled is not None:
            self._cancelled.set()

    # --- TurnEvents ---------------------------------------------------------------

    def text(self, text: str) -> None:
        self._chunk(escape(text))

    def tool_started(self, call_id: str, name: str, input: Json) -> None:
        asked = self._asked.pop(key(name, input), None)
        if asked is not None:
            self._send(ToolCallUpdate(tool_call_id=asked, status="in_progress"))
        else:
            asked = call_id
            self._start(call_id, name, input, "in_progress")
        self._running[call_id] = asked

    def tool_progress(self, call_id: str, tail: str) -> None:
        acp_id = self._running.get(call_id)
        if acp_id is None or self._progress.get(call_id) == tail:
            return
        self._progress[call_id] = tail
        self._send(ToolCallUpdate(tool_call_id=acp_id, content=[Content(content=TextBlock(text=escape(tail)))]))

    def tool_finished(self, call_id: str, name: str, output: ToolOutput, seconds: float) -> None:
        acp_id = self._running.pop(call_id, call_id)
        self._progress.pop(call_id, None)
        self._send(
            ToolCallUpdate(
                tool_call_id=acp_id,
                status="failed" if output.is_error else "completed",
                content=result_content(output, self.cwd),
            )
        )

    def waiting(self, what: str) -> None:
        self.say(escape(f"bingo: {what}"))

    def refused(self, call_id: str, name: str, why: str) -> None:
        self._start(call_id, name, None, "failed", [Content(content=TextBlock(text=escape(why)))])

    def end(self) -> None:
        return None

    # --- notices and outcomes -----------------------------------------------------

    def notice(self, notice: Notice) -> None:
        self.say(escape(f"{notice.source}: {notice.message}"), notice.level, notice.source)

    def outcome(self, outcome: CommandOutcome) -> None:
        match outcome:
            case TextOutcome(text=text):
                self._chunk(escape(text))
            case ViewOutcome(view=view):
                self._chunk(markdown(escape_view(view)))
            case ErrorOutcome(message=message):
                self.say(escape(f"bingo: {message}"), "error")
            case PromptOutcome() | NoneOutcome():
                pass

    # --- Asker: the client asks the person ------------------------------------------

    async def _ask(self, tool_call: PermissionToolCall, options: list[PermissionOption]) -> str | None:
        """The option the person chose, or None: cancelled (by the client, or the prompt's
        cancel), or a client that could not answer."""
        cancelled = self._cancelled
        if cancelled is not None and cancelled.is_set():
            return None
        asking = asyncio.ensure_future(
            self._peer.request_permission(PermissionParams(session_id=self.id, tool_call=tool_call, options=options))
        )
        stop: asyncio.Task[bool] | None = None
        if cancelled is not None:
            stop = asyncio.ensure_future(cancelled.wait())
            stop.add_done_callback(lambda _: asking.cancel())
        try:
            await asyncio.wait([asking])
        finally:
            asking.cancel()
            if stop is not None:
                stop.cancel()
        if asking.cancelled():
            return None
        try:
            answer = asking.result()
        except BingoError as exc:
            _log.info("a permission request in %s got no answer: %s", self.id, exc.line())
            return None
        return answer.outcome.option_id if answer.outcome.outcome == "selected" else None

    async def permission(self, name: str, input: Json, always: str) -> PermissionAnswer:
        self._questions += 1
        acp_id = f"permission-{self._questions}"
        self._start(acp_id, name, input, "pending", asked(name, input))
        options = [
            PermissionOption(option_id=_ONCE, name="Allow once", kind="allow_once"),
            PermissionOption(option_id=_ALWAYS, name=one_line(f"Always allow {always}"), kind="allow_always"),
            PermissionOption(option_id=_REJECT, name="Reject", kind="reject_once"),
        ]
        chosen = await self._ask(PermissionToolCall(tool_call_id=acp_id), options)
        answer: PermissionAnswer = "once" if chosen == _ONCE else "always" if chosen == _ALWAYS else "no"
        if answer == "no":
            self._send(
                ToolCallUpdate(
                    tool_call_id=acp_id,
                    status="failed",
                    content=[Content(content=TextBlock(text=escape(f"{name} was not run: declined")))],
                )
            )
        else:
            self._asked[key(name, input)] = acp_id
        return answer

    async def agent_permission(
        self, call_id: str, agent: str, name: str, input: Json, always: str, by: str, cwd: str
    ) -> PermissionAnswer:
        """A subagent's permission (`AsksForAgents`): asked on the card of the parent's
        `agent` call that runs it (its own card when that one is not running), the agent
        named in what the question shows."""
        acp_id = self._running.get(call_id)
        if acp_id is None:
            return await self.permission(name, input, always)
        said = escape(f"agent {agent} wants to run ") + title(name, input) + (escape(f" · {by}") if by else "")
        options = [
            PermissionOption(option_id=_ONCE, name="Allow once", kind="allow_once"),
            PermissionOption(option_id=_ALWAYS, name=one_line(f"Always allow {always}"), kind="allow_always"),
            PermissionOption(option_id=_REJECT, name="Reject", kind="reject_once"),
        ]
        content: list[ToolCallContent] = [Content(content=TextBlock(text=said)), *asked(name, input)]
        chosen = await self._ask(PermissionToolCall(tool_call_id=acp_id, content=content), options)
        return "once" if chosen == _ONCE else "always" if chosen == _ALWAYS else "no"

    async def ask(self, question: str, choices: list[str] | None) -> str:
        running = list(self._running.values())
        own = not running  # a question of its own (a hook's), not on a call: closed once answered
        if running:
            acp_id = running[-1]  # the call asking (a plugin asks on a call it runs)
        else:
            self._questions += 1
            acp_id = f"question-{self._questions}"
            self._send(ToolCallStart(tool_call_id=acp_id, title=escape(question), kind="other", status="pending"))
        words = choices or ["yes", "no"]
        options = [
            PermissionOption(
                option_id=f"choice-{n}",
                name=escape(word),
                kind="reject_once" if word.strip().lower() in ("no", "n") else "allow_once",
            )
            for n, word in enumerate(words)
        ]
        chosen = await self._ask(
            PermissionToolCall(tool_call_id=acp_id, content=[Content(content=TextBlock(text=escape(question)))]),
            options,
        )
        answer = next((word for n, word in enumerate(words) if chosen == f"choice-{n}"), "no")
        if own:
            self._send(
                ToolCallUpdate(
                    tool_call_id=acp_id,
                    status="failed" if answer == "no" else "completed",
                    content=[Content(content=TextBlock(text=escape(f"{question} {answer}")))],
                )
            )
        return answer

    # --- session/load -----------------------------------------------------------------

    async def replay(self, frames: Iterable[Frame], drain: Callable[[], Awaitable[None]]) -> None:
        """Send a stored session's frames as the updates its turns sent (`session/load`),
        waiting for the client to take them (`drain`) after each: a long session is more
        than a reader is allowed to leave unread at once."""
        open_calls: dict[str, None] = {}
        for frame in frames:
            await drain()
            match frame:
                case PromptFrame(text=text, images=images):
                    for image in images:
                        await drain()
                        if len(image.data) <= REPLAYED_IMAGE:
                            self._send(
                                UserMessageChunk(content=ImageBlock(mime_type=image.media_type, data=image.data))
                            )
                        else:
                            self._send(
                                UserMessageChunk(
                                    content=TextBlock(
                                        text=escape(_placeholder(image.media_type, len(image.data))) + "\n"
                                    )
                                )
                            )
                    for piece in _pieces(escape(text)) if text or not images else []:
                        await drain()
                        self._send(UserMessageChunk(content=TextBlock(text=piece)))
                case AssistantFrame(message=message):
                    for block in message.content:
                        if isinstance(block, MessageText):
                            for piece in _pieces(escape(block.text)):
                                await drain()
                                self._chunk(piece)
                        elif isinstance(block, ToolUseBlock):
                            open_calls[block.id] = None
                            self._start(block.id, block.name, block.input, "pending")
                case ToolResultFrame(call_id=call_id, output=output):
                    open_calls.pop(call_id, None)
                    self._send(
                        ToolCallUpdate(
                            tool_call_id=call_id,
                            status="failed" if output.is_error else "completed",
                            content=result_content(output, self.cwd),
                        )
                    )
                case NoticeFrame(notice=notice):
                    self.notice(notice)
                case CompactionFrame(reason="clear"):
                    self.say("bingo: /clear: the conversation started afresh here (the model saw nothing before it)")
                case CompactionFrame(by=by):
                    self.say(escape(f"bingo: the conversation was compacted here{f' (by {by})' if by else ''}"))
                case RewindFrame():
                    self.say("bingo: /rewind: the conversation went back to before an earlier prompt here")
                case AgentFrame(call_id=call_id, agent=agent, frame=child):
                    # As it was seen live: the parent's call's live line, the agent's.
                    for line in agent_lines(child)[-1:]:
                        self._send(
                            ToolCallUpdate(
                                tool_call_id=call_id,
                                content=[Content(content=TextBlock(text=f"{escape(agent)}: {line}"))],
                            )
                        )
                case ToolCallFrame():
                    pass
        for call_id in open_calls:
            self._send(
                ToolCallUpdate(
                    tool_call_id=call_id,
                    status="failed",
                    content=[Content(content=TextBlock(text="the call did not finish"))],
                )
            )
