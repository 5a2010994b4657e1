"""`/rewind`: put the project's files and the conversation back as they were before one of
this session's prompts (INTERFACE.md §10, ADR-0044).

Owns the command: its arguments (`N`, `--files`, `--conversation`), the list of this
session's points (newest first: the prompt's first line, when, how many recorded files
changed since), what a restore will create, change and remove, the question on a terminal
(elsewhere, an editor and a room, `/rewind N` is the decision and what it did is said after),
the rewind's own checkpoint first (so it can be rewound), the files put back and the
conversation's later frames set aside (a `RewindFrame`: kept, not part of the history, so
`-c` and `--resume` go on from there). The checkpoints themselves are `bingo.checkpoint`'s;
the run takes one before each prompt's turn (`Run`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..kernel.errors import GateError, SessionError
from ..kernel.frames import Frame, RewindFrame, history
from ..kernel.interfaces import CommandContext
from ..kernel.registry import BUILTIN
from ..surfaces import one_line
from ..wire import CommandArgs, CommandOutcome, CommandSpec, Completion, ErrorOutcome, TextOutcome

if TYPE_CHECKING:
    from ..checkpoint import Checkpoints, Plan, Point, Scan
    from ._run import Run

__all__ = ["RewindCommand"]

_LISTED = 50
"""Points a list shows (the newest); `/rewind N` reaches any."""
_NAMED = 20
"""Paths a line of the plan names before it says how many more."""
_USAGE = "/rewind [N] [--files | --conversation]: N = 1 for the latest prompt, 2 for the one before, …"


def _isolated(frames: list[Frame]) -> list[str]:
    """What `/rewind` leaves of the subagents that ran in git worktrees since (ADR-0049):
    checkpoints never record `.git`, so their work stays on their branches."""
    from ._seen import worktrees

    return [
        f"  not rewound: what agent {agent} wrote in the git worktree {path} (branch {branch}): merge or drop it with git"
        for agent, path, branch in worktrees(frames)
    ]


def _names(paths: list[str]) -> str:
    shown = ", ".join(one_line(p) for p in paths[:_NAMED])
    return shown if len(paths) <= _NAMED else f"{shown} and {len(paths) - _NAMED} more"


def _when(point: Point) -> str:
    import time  # datetime is not imported at start for a command never run

    return time.strftime("%Y-%m-%d %H:%M", time.localtime(point.time))


def _what(point: Point) -> str:
    said = one_line(point.label)
    return f"the rewind {said}" if point.kind == "rewind" else f"«{said}»"


def row(point: Point, changed: int) -> str:
    """One point as `/rewind` lists it: what, when, and how many recorded files changed since."""
    since = "?" if changed < 0 else f"{changed} file{'s' if changed != 1 else ''} changed since"
    return f"{_what(point)} · {_when(point)} · {since}"


class RewindCommand:
    """`/rewind [N] [--files | --conversation]` over one run."""

    __slots__ = ("_checkpoints", "_run")
    spec = CommandSpec(
        name="rewind",
        hint="put the files and the conversation back as they were before a prompt",
        args=CommandArgs(kind="free", hint="[N] [--files | --conversation]"),
        family="bingo",
    )
    source = BUILTIN

    def __init__(self, run: Run, checkpoints: Callable[[], Checkpoints]) -> None:
        self._run = run
        self._checkpoints = checkpoints

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return [
            Completion(value=v, hint=h)
            for v, h in (("--files", "the files only"), ("--conversation", "the conversation only"))
            if v.startswith(partial)
        ]

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        words = args.split()
        files = conversation = True
        wanted: int | None = None
        for word in words:
            if word == "--files":
                conversation = False
            elif word == "--conversation":
                files = False
            elif word.isdigit() and wanted is None and int(word) >= 1:
                wanted = int(word)
            else:
                return ErrorOutcome(message=f"/rewind does not take {one_line(word)}: {_USAGE}")
        if not (files or conversation):
            return ErrorOutcome(message=f"--files and --conversation each restore one; give neither for both: {_USAGE}")
        run = self._run
        pending = run.conversation.before_tools
        if pending is not None and not pending.done():
            # The last turn's checkpoint, still being taken (the turn ended first): it is the
            # newest point, and it holds the project until it ends.
            run.surface.waiting("waiting for the last prompt's checkpoint to end")
            await asyncio.wait({pending})
            await asyncio.sleep(0)  # its end lets the project go (a callback of its own)
        session = run.session.id
        checkpoints = self._checkpoints()
        points = await asyncio.to_thread(checkpoints.points, session) if session is not None else []
        if session is None or not points:
            return TextOutcome(text="nothing to rewind: no prompt of this session has a checkpoint yet")
        looked = await asyncio.to_thread(checkpoints.look)
        if looked.scan is None:
            return ErrorOutcome(message=f"nothing rewound: the project could not be looked at: {looked.failed}")
        now = looked.scan
        if wanted is None:
            rows = [row(p, await asyncio.to_thread(checkpoints.changed, now, p)) for p in points[:_LISTED]]
            chooser = self._terminal()
            if chooser is None:
                return TextOutcome(
                    text="\n".join(
                        [
                            "this session's prompts, the latest first:",
                            *(f"{n}. {line}" for n, line in enumerate(rows, 1)),
                            "/rewind N puts the files and the conversation back as they were before prompt N",
                        ]
                    )
                )
            try:
                picked = await chooser.choose("rewind to before which prompt?", rows)
            except GateError:
                return TextOutcome(text="nothing rewound")
            wanted = rows.index(picked) + 1
        if wanted > len(points):
            return ErrorOutcome(
                message=f"there is no prompt {wanted} to rewind to: this session has {len(points)} (/rewind lists them)"
            )
        point = points[wanted - 1]
        try:
            plan = checkpoints.plan(now, point) if files else None
        except OSError as exc:
            return ErrorOutcome(message=f"nothing rewound: that checkpoint cannot be read: {exc}")
        lines = self._plan_lines(point, plan, now, conversation)
        if files:
            lines.extend(_isolated(run.session.frames()[point.seq :]))
        chooser = self._terminal()
        if chooser is not None:
            try:
                answer = await chooser.ask("\n".join([*lines, "rewind?"]), ["yes", "no"])
            except GateError:
                answer = "no"
            if answer.strip().lower() not in ("yes", "y"):
                return TextOutcome(text="nothing rewound")
        try:
            hold = await asyncio.to_thread(checkpoints.hold)
        except OSError as exc:
            return ErrorOutcome(message=f"nothing rewound: the project's lock cannot be taken: {exc.strerror or exc}")
        if hold is None:
            return ErrorOutcome(
                message="nothing rewound: another bingo is running a turn in this project; rewind when it has ended"
            )
        try:
            done = await self._rewind(point, args, files=files)
        finally:
            hold()
        if isinstance(done, ErrorOutcome):
            return done
        if conversation:
            run.session.append(RewindFrame(to=point.seq, turn=run.conversation.turn))
            run.conversation.messages = history(run.session.frames())
            run.conversation.pieces = []
            done.append("the conversation goes on from before that prompt (what came after is set aside, not deleted)")
        done.append("/rewind 1 undoes this rewind")
        return TextOutcome(text="\n".join([*lines, *done]))

    async def _rewind(self, point: Point, args: str, *, files: bool) -> list[str] | ErrorOutcome:
        """With the project held alone: look again (what the person saw may have moved while
        they answered), checkpoint that (the undo), then put the files back; what was done."""
        run, checkpoints = self._run, self._checkpoints()
        session = point.session
        looked = await asyncio.to_thread(checkpoints.look)
        if looked.scan is None:
            return ErrorOutcome(message=f"nothing rewound: the project could not be looked at: {looked.failed}")
        now = looked.scan
        try:
            plan = checkpoints.plan(now, point) if files else None
            seq = run.session.store.info(session).frames
        except (OSError, SessionError) as exc:
            return ErrorOutcome(message=f"nothing rewound: {exc}")
        label = f"/rewind {args.strip()}".strip()
        kept = await asyncio.to_thread(
            checkpoints.record, now, session=session, seq=seq, turn=run.conversation.turn, kind="rewind", label=label
        )
        if kept is None:
            return ErrorOutcome(
                message="nothing rewound: the project could not be checkpointed first, so the rewind could not be undone"
            )
        done = [f"rewound to before {_what(point)} ({_when(point)})"]
        if plan is not None:
            from ..checkpoint import Journal

            journal = Journal(session=session, target=_what(point), undo=f"the rewind {one_line(label)}")
            try:
                failed = await asyncio.to_thread(checkpoints.restore, plan, journal)
            except OSError as exc:
                return ErrorOutcome(message=f"nothing rewound: {exc.strerror or exc}")
            done.append(self._done_files(plan, failed))
        return done

    def _terminal(self) -> _Chooser | None:
        if self._run.place != "terminal":
            return None
        from ..surfaces.terminal import TerminalSurface

        surface = self._run.surface
        return surface if isinstance(surface, TerminalSurface) else None

    @staticmethod
    def _plan_lines(point: Point, plan: Plan | None, now: Scan, conversation: bool) -> list[str]:
        lines = [f"/rewind to before {_what(point)} ({_when(point)}):"]
        if plan is not None:
            if plan.empty():
                lines.append("  the recorded files are as they were then: none to create, change or remove")
            for verb, paths in (("create", plan.create), ("change", plan.change), ("remove", plan.remove)):
                if paths:
                    lines.append(f"  {verb}s {_names(paths)}")
            unrecorded = [f"ignored by .gitignore: {_names(now.ignored)}"] if now.ignored else []
            if plan.left:
                unrecorded.append(_names([f"{path} ({why})" for path, why in plan.left]))
            unrecorded.append(".git, the project's .bingo/ and every file outside the project")
            lines.append(f"  not recorded, left as they are: {'; '.join(unrecorded)}")
        if conversation:
            lines.append("  the conversation goes back to before that prompt")
        return lines

    @staticmethod
    def _done_files(plan: Plan, failed: list[tuple[str, str]]) -> str:
        count = len(plan.create) + len(plan.change) + len(plan.remove) - len(failed)
        line = f"put back {count} file{'s' if count != 1 else ''}"
        if failed:
            line += "; not put back: " + _names([f"{path} ({why})" for path, why in failed])
        return line


if TYPE_CHECKING:
    from typing import Protocol

    class _Chooser(Protocol):
        async def choose(self, question: str, rows: list[str]) -> str: ...
        async def ask(self, question: str, choices: list[str] | None) -> str: ...
