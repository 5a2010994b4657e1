"""Command hooks in Claude Code's shape: a settings entry's command, run at one of bingo's
hook points with the event as JSON on its stdin (INTERFACE.md section 11).

Owns the map from Claude Code's events to bingo's points (`PreToolUse` is `tool.before`,
`PostToolUse` `tool.after`, `UserPromptSubmit` `prompt.submit`, `Stop` `turn.end`,
`SessionStart` and `SessionEnd` `session.start` and `.end`), the JSON a hook reads (Claude
Code's field names; its tool names and inputs where bingo has the same tool: `Bash`,
`Read`, `Write`, `Edit`, `Glob`, `Grep`; `mcp__<server>__<tool>` for an MCP server's), the
matcher (a regular expression over those names), running the command (in the sandbox, as
`bash` runs a command; bounded output; its group killed at its timeout), and what its exit
and its output decide: exit 2 denies (`PreToolUse`, stderr the reason) or blocks the prompt
(`UserPromptSubmit`); exit 0 with `{"decision": "block"}` or `{"hookSpecificOutput":
{"permissionDecision": "deny" | "ask"}}` does the same or asks; `allow` decides nothing
(hooks only tighten); any other exit, a timeout or output that is not a decision is one
notice and decides nothing, or asks when the entry fails closed.

A `CommandHook` is a kernel `Hook`: it is registered beside the plugins' hooks and run by
`kernel.hooks.Hooks` at the one point every tool call passes (`Conversation._call_tool`), so
nothing a plugin's hook sees escapes it. It does not read settings (kernel/settings.py
does) nor decide what the gate does with an `ask` (the gate does).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from ..kernel.interfaces import Hook
from ..kernel.notices import Notices
from ..kernel.patterns import Regex, linear
from ..kernel.settings import CommandHookEntry
from ..wire import HookOutcome, HookSpec, Json, is_array, is_object

if TYPE_CHECKING:
    from ..sandbox import Policy, Sandbox, Started

__all__ = ["DEFAULT_TIMEOUT", "EVENTS", "CommandHook", "claude_tool", "command_hooks"]

EVENTS: dict[str, tuple[str, str]] = {
    "PreToolUse": ("tool", "before"),
    "PostToolUse": ("tool", "after"),
    "UserPromptSubmit": ("prompt", "submit"),
    "Stop": ("turn", "end"),
    "SessionStart": ("session", "start"),
    "SessionEnd": ("session", "end"),
}
"""Each Claude Code event and the bingo hook point it runs at."""

DEFAULT_TIMEOUT = 60.0
"""Seconds a command hook may run when its entry names no `timeout` (Claude Code's default)."""
_OUTPUT_MAX = 65_536
"""Bytes of a hook's stdout, and of its stderr, kept: the rest is read and dropped."""
_REASON_MAX = 2_000
"""Characters of a hook's reason (stderr, or its JSON's) passed on to the model and the person."""
_INPUT_MAX = 1_000_000
"""Bytes of JSON a hook is given on stdin at most: a tool input larger than this (a `write` of
a big file) is given with its long strings cut."""
_NAME_CHARS = 60
"""Characters of a hook's command in its name (the end is kept: the script is named there)."""
_GRACE = 1.0
"""Seconds past a hook's own timeout the kernel's deadline allows, so the hook's own timer,
which kills its process group and says so, fires first."""

_CLAUDE_TOOLS = {"bash": "Bash", "read": "Read", "write": "Write", "edit": "Edit", "glob": "Glob", "grep": "Grep"}
_CLAUDE_FIELDS = {"path": "file_path"}
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def claude_tool(name: str, mcp: Collection[str]) -> str:
    """The name a hook sees for bingo's tool `name`: Claude Code's where bingo has the same
    tool, `mcp__<server>__<tool>` for a tool of an MCP server (a plugin named in `mcp`),
    bingo's own otherwise."""
    if name in _CLAUDE_TOOLS:
        return _CLAUDE_TOOLS[name]
    parts = name.split("__", 2)
    if len(parts) == 3 and parts[0] == "plugin" and parts[1] in mcp:
        return f"mcp__{parts[1]}__{parts[2]}"
    return name


def _claude_input(name: str, input: Json) -> Json:
    """A built-in tool's input in Claude Code's words (`path` is `file_path`, camelCase is
    snake_case: `oldString` is `old_string`); any other tool's as it is."""
    if name not in _CLAUDE_TOOLS or not is_object(input):
        return input
    out: dict[str, Json] = {}
    for key, value in input.items():
        out[_CLAUDE_FIELDS.get(key) or _CAMEL.sub(lambda m: "_" + m.group(1).lower(), key)] = value
    return out


def _bounded(value: Json, room: int) -> Json:
    """`value` with each string longer than `room` characters cut (a marker says so)."""
    if isinstance(value, str):
        return value if len(value) <= room else value[:room] + f"… [{len(value) - room} characters cut]"
    if is_array(value):
        return [_bounded(item, room) for item in value]
    if is_object(value):
        return {key: _bounded(item, room) for key, item in value.items()}
    return value


def _matches(pattern: Regex | None, tool: str) -> bool:
    return pattern is None or pattern.fullmatch(tool) is not None


class _Ran:
    """What a hook's process did: its exit (None: killed at its timeout), stdout, stderr."""

    __slots__ = ("code", "stderr", "stdout")

    def __init__(self, code: int | None, stdout: bytes, stderr: bytes) -> None:
        self.code, self.stdout, self.stderr = code, stdout, stderr


class CommandHook:
    """One command hook of the settings, as a kernel `Hook` at its event's point."""

    __slots__ = ("_entry", "_matcher", "_mcp", "_notices", "_project", "_sandbox", "_session", "deadline", "spec")

    def __init__(
        self,
        entry: CommandHookEntry,
        matcher: Regex | None,
        *,
        notices: Notices,
        sandbox: Sandbox | None,
        project: Path,
        session: Callable[[], str],
        mcp: Collection[str],
    ) -> None:
        self._entry = entry
        self._matcher = matcher
        self._notices = notices
        self._sandbox = sandbox
        self._project = project
        self._session = session
        self._mcp = mcp
        site, point = EVENTS[entry.event]
        words = " ".join(entry.command.split())
        shown = words if len(words) <= _NAME_CHARS else "…" + words[-(_NAME_CHARS - 1) :]
        self.spec = HookSpec(name=f"{entry.event} {shown}", site=site, points=[point])
        self.deadline = (entry.timeout or DEFAULT_TIMEOUT) + _GRACE
        """Seconds the kernel waits for this hook (`Hooks`): its own timeout and a grace."""

    @property
    def source(self) -> str:
        return "command hooks"

    # --- the kernel's Hook ------------------------------------------------------------

    async def decide(self, point: str, payload: Json) -> HookOutcome:
        event = self._event(payload)
        if event is None:
            return HookOutcome(outcome="continue")
        ran = await self._run(event)
        if ran is None:
            return self._undecided()
        return self._decision(ran)

    async def observe(self, point: str, payload: Json) -> None:
        event = self._event(payload)
        if event is None:
            return
        ran = await self._run(event)
        if ran is not None and ran.code not in (0, 2):
            self._say(f"exited {ran.code}{self._stderr(ran)}")

    # --- the event --------------------------------------------------------------------

    def _event(self, payload: Json) -> dict[str, Json] | None:
        """The JSON the hook reads for `payload`, or None when its matcher leaves it out."""
        fields = payload if is_object(payload) else {}
        event: dict[str, Json] = {
            "session_id": self._session(),
            "cwd": str(self._project),
            "hook_event_name": self._entry.event,
        }
        if self._entry.event in ("PreToolUse", "PostToolUse"):
            name = str(fields.get("tool", ""))
            tool = claude_tool(name, self._mcp)
            if not _matches(self._matcher, tool):
                return None
            event["tool_name"] = tool
            event["tool_input"] = _claude_input(name, fields.get("input"))
            if "callId" in fields:
                event["tool_use_id"] = fields["callId"]
            if self._entry.event == "PostToolUse":
                event["tool_response"] = fields.get("output")
        elif self._entry.event == "UserPromptSubmit":
            event["prompt"] = fields.get("text", "")
        elif self._entry.event == "Stop":
            event["stop_hook_active"] = False
        elif self._entry.event == "SessionStart":
            event["source"] = "startup"
        elif self._entry.event == "SessionEnd":
            event["reason"] = "other"
        return event

    # --- what it decided --------------------------------------------------------------

    def _decision(self, ran: _Ran) -> HookOutcome:
        refuse = "block" if self._entry.event == "UserPromptSubmit" else "deny"
        if ran.code == 2:
            reason = ran.stderr.decode("utf-8", errors="replace").strip() or f"{self.spec.name} exited 2"
            return HookOutcome(outcome=refuse, value=reason[:_REASON_MAX])
        if ran.code != 0:
            self._say(f"exited {ran.code}{self._stderr(ran)}")
            return self._undecided()
        text = ran.stdout.decode("utf-8", errors="replace").strip()
        if not text.startswith("{"):
            return HookOutcome(outcome="continue")  # plain output decides nothing, as in Claude Code
        try:
            answer: Json = msgspec.json.decode(text)
        except msgspec.DecodeError:
            self._say("printed output that starts like JSON and is not: print one JSON object, or nothing")
            return self._undecided()
        if not is_object(answer):
            return HookOutcome(outcome="continue")
        return self._from_json(answer, refuse)

    def _from_json(self, answer: dict[str, Json], refuse: str) -> HookOutcome:
        specific = answer.get("hookSpecificOutput")
        decision: Json = None
        reason: Json = answer.get("reason")
        if is_object(specific):
            decision = specific.get("permissionDecision")
            reason = specific.get("permissionDecisionReason") or reason
        if decision is None:
            decision = answer.get("decision")
        if decision is None and answer.get("continue") is False:
            decision, reason = "block", answer.get("stopReason") or reason
        why = str(reason)[:_REASON_MAX] if reason else None
        match decision:
            case None | "approve" | "undefined":
                return HookOutcome(outcome="continue")
            case "block" | "deny":
                return HookOutcome(outcome="block" if refuse == "block" else "deny", value=why)
            case "ask":  # the gate asks (PreToolUse), or the person is asked to send the prompt
                return HookOutcome(outcome="ask", value=why)
            case "allow":
                self._notices.say_once(
                    "command hooks",
                    f"allow:{self._entry.where}:{self._entry.command}",
                    f"{self.spec.name} ({self._entry.where}) answered allow, which decides nothing in bingo: "
                    "hooks only tighten; allow a tool with permissions.allow",
                    "info",
                )
                return HookOutcome(outcome="continue")
            case _:
                self._say(f"answered decision {str(decision)[:40]!r}, which is not block, deny or ask")
                return self._undecided()

    def _undecided(self) -> HookOutcome:
        """A hook that decided nothing (its notice said why): `continue`, or `ask` when its
        entry fails closed."""
        if self._entry.fail_closed:
            return HookOutcome(outcome="ask", value=f"{self.spec.name} failed and fails closed")
        return HookOutcome(outcome="continue")

    def _stderr(self, ran: _Ran) -> str:
        words = " ".join(ran.stderr.decode("utf-8", errors="replace").split())
        return f" ({words[:200]})" if words else ""

    def _say(self, what: str) -> None:
        fate = "is treated as ask (failClosed)" if self._entry.fail_closed else "decides nothing"
        self._notices.say("command hooks", f"{self.spec.name} ({self._entry.where}) {what}, and {fate}", "warning")

    # --- running it -------------------------------------------------------------------

    async def _run(self, event: dict[str, Json]) -> _Ran | None:
        """Run the command with `event` on its stdin; None when it could not be run or was
        killed at its timeout (said in one notice)."""
        data = json.dumps(event).encode()
        if len(data) > _INPUT_MAX:
            data = json.dumps(_bounded(event, 10_000)).encode()
        timeout = self._entry.timeout or DEFAULT_TIMEOUT
        env = dict(os.environ)
        policy: Policy | None = None
        package = self._entry.package
        own = [Path(path) for path in package] if package is not None else []
        if package is not None:
            try:
                own[1].mkdir(parents=True, exist_ok=True)
            except OSError:
                pass
        if self._sandbox is not None:
            confined = await self._sandbox.for_bash(own, own[1:])
            if confined is not None:
                policy, env = confined.policy, dict(confined.env)
        if package is not None:
            env["CLAUDE_PLUGIN_ROOT"] = env["PLUGIN_ROOT"] = package[0]
            env["CLAUDE_PLUGIN_DATA"] = env["PLUGIN_DATA"] = package[1]
        env["CLAUDE_PROJECT_DIR"] = env["BINGO_PROJECT_DIR"] = str(self._project)
        try:
            process = await _Process.start(self._entry.command, env, self._project, policy)
        except OSError as exc:
            self._say(f"could not be started ({exc.strerror or exc})")
            return None
        try:
            async with asyncio.timeout(timeout):
                return await process.communicate(data)
        except TimeoutError:
            process.kill()
            self._say(f"did not end within its timeout ({timeout:g} s) and was stopped")
            return None
        finally:
            process.kill()
            await process.reap()


class _Process:
    """A hook's process: `bash -c COMMAND` leading a group of its own, confined by `policy`
    (through the sandbox's janitor) or not: the sandbox's `start`, as a plugin's."""

    __slots__ = ("_started",)

    def __init__(self, started: Started) -> None:
        self._started = started

    @classmethod
    async def start(cls, command: str, env: dict[str, str], cwd: Path, policy: Policy | None) -> _Process:
        from ..sandbox import start

        argv = ["/bin/bash", "-c", command]
        # Unconfined, it is started directly; no warden either way: its group is killed here.
        # Its readers buffer no more than the output kept.
        started = await start(
            argv,
            env=env,
            cwd=cwd,
            grace=0.5,
            janitor=policy is not None,
            policy=policy,
            warden=False,
            limit=_OUTPUT_MAX,
        )
        return cls(started)

    async def communicate(self, data: bytes) -> _Ran:
        started = self._started

        async def feed() -> None:
            with contextlib.suppress(OSError, ConnectionError):
                started.stdin.write(data)
                await started.stdin.drain()
            with contextlib.suppress(OSError, ConnectionError):
                started.stdin.close()

        _, out, err = await asyncio.gather(feed(), _drain(started.stdout), _drain(started.stderr))
        code = await started.wait()
        return _Ran(code, out, err)

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            os.killpg(self._started.pid, signal.SIGKILL)

    async def reap(self) -> None:
        with contextlib.suppress(OSError, ConnectionError):
            self._started.stdin.close()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(5):
                await asyncio.shield(self._started.wait())


async def _drain(stream: asyncio.StreamReader) -> bytes:
    """All of `stream` until its end, keeping `_OUTPUT_MAX` bytes."""
    kept = bytearray()
    while chunk := await stream.read(65_536):
        if len(kept) < _OUTPUT_MAX:
            kept += chunk[: _OUTPUT_MAX - len(kept)]
    return bytes(kept)


def command_hooks(
    entries: Collection[CommandHookEntry],
    *,
    notices: Notices,
    sandbox: Sandbox | None,
    project: Path,
    session: Callable[[], str],
    mcp: Collection[str],
) -> list[Hook]:
    """A `CommandHook` for each entry; an entry whose matcher is not a regular expression is
    one notice and left out."""
    hooks: list[Hook] = []
    for entry in entries:
        matcher: Regex | None = None
        if entry.matcher not in ("", "*"):
            try:
                matcher = linear(entry.matcher)  # RE2: no matcher backtracks on a long tool name (ADR-0051)
            except ValueError as exc:
                notices.say(
                    "command hooks",
                    f"{entry.where}: hooks.{entry.event} matcher {entry.matcher[:80]!r} is not a regular expression "
                    f"({exc}), so its hooks do not run; fix the matcher",
                    "warning",
                )
                continue
        hooks.append(
            CommandHook(entry, matcher, notices=notices, sandbox=sandbox, project=project, session=session, mcp=mcp)
        )
    return hooks
