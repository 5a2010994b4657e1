"""One script run: the prompt (with `--json-schema`'s instruction) submitted to the run the
factory opened, at most one correction round, and the result line (INTERFACE.md §13).

Owns the run's order for a script and the result's every field: the subtype and exit
status (0 success; 1 the turn failed, `--max-turns` was reached or the answer never met the
schema; a BingoError's own status otherwise, 2 for bad usage), the final text, the usage
summed over every response (`input_tokens` without the cached input, as Anthropic reports
it and Claude Code prints it), `total_cost_usd` from the built-in providers' price table
(`providers.cost_usd`, each response at its own model's, a subagent's too: `TurnLimit.cost`;
null once any came from another model), `num_turns` (model requests), the time
and the refusals. It does not open the run (the app asks the factory) and does not write
lines (the surface does).
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable
from typing import Any, Protocol

from ...kernel.dispatch import ChooseModel
from ...kernel.errors import BingoError
from ...kernel.frames import Frame
from ...kernel.turn import Conversation, SessionLog
from ...wire import Usage
from .._seam import RunHandle
from ._limit import TurnLimit
from ._shapes import ResultLine, ResultUsage
from ._surface import ScriptSurface

__all__ = ["ScriptRun", "run_script"]


class _Planned(Protocol):
    @property
    def planned(self) -> str | None:
        """The id the run's session is created under, at its first frame."""
        ...


class ScriptRun(RunHandle, Protocol):
    """What the script driver needs of its run (`bingo.run.Run`)."""

    conversation: Conversation

    def choose(self) -> None: ...

    def model(self) -> str | None: ...

    @property
    def session(self) -> _Planned: ...


class _Tee:
    """The conversation's log, and the surface told of each frame as it is written."""

    __slots__ = ("_log", "_surface")

    def __init__(self, log: SessionLog, surface: ScriptSurface) -> None:
        self._log, self._surface = log, surface

    def append(self, frame: Frame) -> None:
        self._log.append(frame)
        self._surface.frame(frame)


async def run_script(
    open: Callable[[ChooseModel], ScriptRun],
    surface: ScriptSurface,
    prompt: str,
    *,
    choose_model: ChooseModel,
    max_turns: int | None,
    schema: dict[str, Any] | None,
    cwd: str,
    plugins: list[str],
) -> int:
    """Run `prompt` for a script on the run `open` opens with the model choice it is given
    (`choose_model`, counted), write its lines, and close it; the exit status."""
    limit = TurnLimit(choose_model, max_turns)
    run = open(limit)
    loop = asyncio.get_running_loop()
    # Ctrl-C (or a CI runner's SIGINT) interrupts the turn as in text mode (a second stops
    # waiting for the interrupted calls), and the run still ends with its result line.
    loop.add_signal_handler(signal.SIGINT, run.interrupt)
    try:
        return await _drive(run, surface, prompt, limit=limit, schema=schema, cwd=cwd, plugins=plugins)
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        run.close()


async def _drive(
    run: ScriptRun,
    surface: ScriptSurface,
    prompt: str,
    *,
    limit: TurnLimit,
    schema: dict[str, Any] | None,
    cwd: str,
    plugins: list[str],
) -> int:
    started = time.monotonic()
    conversation = run.conversation
    conversation.log = _Tee(conversation.log, surface)
    run.choose()  # the model the init line names (no request is made, no client built)
    surface.session_id = run.session_id() or run.session.planned or ""
    surface.model = run.model()
    surface.init(cwd=cwd, tools=sorted(conversation.registry.tools), plugins=plugins)
    subtype, structured = "success", None
    errors: list[str] = []
    try:
        status, text = await _submit(run, surface, prompt if schema is None else _told(prompt, schema))
        if status == 0 and schema is not None:
            from ._answer import Answer, correction

            answer = Answer(schema, text)
            if answer.problem is not None:
                status, text = await _submit(run, surface, correction(answer.problem))
                if status == 0:
                    answer = Answer(schema, text)
            if status == 0 and answer.problem is not None:
                status, text = (
                    1,
                    f"the answer is not valid against --json-schema after one correction: {answer.problem}",
                )
            structured = answer.value
        if status != 0:
            subtype = "error_max_turns" if limit.exceeded else "error_during_execution"
            errors.append(text)
    except BingoError as exc:
        status, text, subtype = exc.exit_code, exc.line(), "error_during_execution"
        errors.append(text)
    if errors:
        surface.failed(text)
    surface.result(
        ResultLine(
            subtype=subtype,
            is_error=status != 0,
            result=text,
            session_id=run.session_id() or surface.session_id,
            num_turns=limit.requests,
            duration_ms=round((time.monotonic() - started) * 1000),
            duration_api_ms=round(limit.api_seconds * 1000),
            usage=_usage(conversation.used),
            total_cost_usd=limit.cost,
            permission_denials=surface.denials(),
            structured_output=structured if schema is not None and subtype == "success" else _unset(),
            errors=errors if errors else _unset(),
        )
    )
    return status


async def _submit(run: ScriptRun, surface: ScriptSurface, text: str) -> tuple[int, str]:
    """One submission: its status and the text it ends with (the final answer, a command's
    outcome, or the line saying why it failed)."""
    surface.outcome_text, surface.outcome_failed, surface.last_text = None, False, ""
    submitted = await run.dispatch(text)
    if submitted.outcome is not None:
        surface.outcome(submitted.outcome)
    turn = submitted.turn
    if turn is not None and turn.status != "done":
        return submitted.status or 1, turn.reason
    if turn is None:
        return submitted.status, surface.outcome_text or ""
    return submitted.status, surface.last_text


def _told(prompt: str, schema: dict[str, Any]) -> str:
    from ._answer import instruction

    return f"{prompt}\n\n{instruction(schema)}"


def _usage(used: Usage) -> ResultUsage:
    cached = used.cache_read_tokens + used.cache_write_tokens
    return ResultUsage(
        input_tokens=max(0, used.input_tokens - cached),
        output_tokens=used.output_tokens,
        cache_read_input_tokens=used.cache_read_tokens,
        cache_creation_input_tokens=used.cache_write_tokens,
    )


def _unset() -> Any:
    import msgspec

    return msgspec.UNSET
