"""The keyboard loop against a fake run, with keys from a pipe and the screen in a StringIO:
instant commands beside a turn, Ctrl-C and Ctrl-D, questions one at a time, completion."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from io import StringIO
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.input.base import PipeInput
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from bingo.kernel.errors import UsageError
from bingo.surfaces._calls import Preview
from bingo.surfaces.terminal import TerminalSurface, interact
from bingo.surfaces.terminal._input import CommandCompleter, preview_rows
from bingo.wire import CommandArgs, CommandSpec, Completion, TextOutcome

CTRL_C, CTRL_D = "\x03", "\x04"


class Screen(StringIO):
    """The console's file; `shows` waits until some text has been written."""

    def __init__(self) -> None:
        super().__init__()
        self.written = asyncio.Event()
        self.writes: list[str] = []
        """Each write, as the console made it."""

    def write(self, s: str) -> int:
        self.written.set()
        self.writes.append(s)
        return super().write(s)

    async def shows(self, text: str) -> None:
        while text not in self.getvalue():
            self.written.clear()
            await self.written.wait()


class FakeRun:
    """A run whose turn lasts until released; `/count` is instant, `/later` is not."""

    def __init__(self, surface: TerminalSurface) -> None:
        self.surface = surface
        self.submitted: list[str] = []
        self.interrupts = 0
        self.turn_started = asyncio.Event()
        self.release = asyncio.Event()
        self.answers: list[object] = []  # a permission's answer may be a Declined
        self.answered = asyncio.Event()
        self._busy = False

    async def submit(self, text: str) -> int:
        self.submitted.append(text)
        if text == "/nope":
            raise UsageError("there is no command /nope", "bingo -p /help lists them")
        if text.startswith("/"):
            self.surface.outcome(TextOutcome(text=f"ran {text}"))
            return 0
        if text == "ask":
            self.answers = list(
                await asyncio.gather(
                    self.surface.permission("bash", {"command": "ls"}, "bash"),
                    self.surface.ask("which?", ["red", "blue"]),
                )
            )
            self.answered.set()
            return 0
        self._busy = True
        self.turn_started.set()
        await self.release.wait()
        self._busy = False
        return 0

    def interrupt(self) -> list[str]:
        self.interrupts += 1
        self.surface.waiting("waiting for plugin__slow__wait to answer its cancel")
        return ["plugin__slow__wait"]

    def commands(self) -> list[CommandSpec]:
        return [
            CommandSpec(name="count", hint="count things", args=CommandArgs(kind="free"), instant=True),
            CommandSpec(name="later", hint="not now"),
        ]

    async def complete(self, name: str, partial: str) -> list[Completion]:
        return [Completion(value="notes.txt", hint="a file")] if name == "count" else []

    def busy(self) -> bool:
        return self._busy


Scenario = Callable[[FakeRun, PipeInput, Screen], Awaitable[None]]


def _drive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scenario: Scenario) -> tuple[int, FakeRun, str]:
    monkeypatch.setenv("BINGO_HOME", str(tmp_path))

    async def main() -> tuple[int, FakeRun, str]:
        screen = Screen()
        surface = TerminalSurface(console=Console(file=screen, width=80, color_system=None))
        run = FakeRun(surface)
        with create_pipe_input() as keys, create_app_session(input=keys, output=DummyOutput()):
            async with asyncio.timeout(5):
                loop = asyncio.ensure_future(interact(run, surface))
                await scenario(run, keys, screen)
                status = await loop
        return status, run, screen.getvalue()

    return asyncio.run(main())


def test_an_instant_command_runs_while_a_turn_is_in_flight_and_another_is_queued_until_it_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario(run: FakeRun, keys: PipeInput, screen: Screen) -> None:
        keys.send_text("work\r")
        await run.turn_started.wait()
        keys.send_text("/count a\r")
        await screen.shows("ran /count a")
        keys.send_text("/later\r")
        await screen.shows("queued: it runs when the turn ends (Ctrl-C drops it)")
        assert run.submitted == ["work", "/count a"]
        run.release.set()
        await screen.shows("ran /later")
        keys.send_text(CTRL_D)

    status, run, _ = _drive(tmp_path, monkeypatch, scenario)
    assert status == 0
    assert run.submitted == ["work", "/count a", "/later"]
    history = (tmp_path / "data" / "history").read_text(encoding="utf-8")
    assert [line for line in history.splitlines() if line.startswith("+")] == ["+work", "+/count a", "+/later"]


def test_ctrl_c_interrupts_once_and_a_second_stops_waiting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def scenario(run: FakeRun, keys: PipeInput, screen: Screen) -> None:
        keys.send_text("work\r")
        await run.turn_started.wait()
        keys.send_text(CTRL_C)
        await screen.shows(
            "waiting for plugin__slow__wait to answer its cancel"
        )  # the status line says Ctrl-C again stops waiting
        keys.send_text(CTRL_C)
        await screen.shows("stopped waiting for plugin__slow__wait")
        run.release.set()
        keys.send_text(CTRL_D)

    status, run, _ = _drive(tmp_path, monkeypatch, scenario)
    assert (status, run.interrupts) == (0, 2)


def test_ctrl_c_at_an_idle_prompt_clears_the_line_and_errors_do_not_end_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario(run: FakeRun, keys: PipeInput, screen: Screen) -> None:
        keys.send_text("half typed" + CTRL_C)
        keys.send_text("/nope\r")
        await screen.shows("bingo: there is no command /nope: bingo -p /help lists them")
        keys.send_text("/count\r")
        await screen.shows("ran /count")
        keys.send_text(CTRL_D)

    status, run, _ = _drive(tmp_path, monkeypatch, scenario)
    assert (status, run.submitted, run.interrupts) == (0, ["/nope", "/count"], 0)


def test_questions_are_put_one_at_a_time_in_the_order_they_were_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def taken(run: FakeRun, left: list[str | None]) -> None:
        """Until only the questions `left` (by tool) are in line: the loop has taken the one
        before them, so keys sent now reach its prompt."""
        while [q.tool for q in run.surface.questions] != left:
            await asyncio.sleep(0)

    async def scenario(run: FakeRun, keys: PipeInput, screen: Screen) -> None:
        keys.send_text("ask\r")
        await taken(run, [None])
        keys.send_text("a")  # the permission: yes, always (the run says what it saved where)
        await taken(run, [])
        keys.send_text("b")  # the plugin's question: its choice by its first letter
        await run.answered.wait()
        keys.send_text(CTRL_D)

    status, run, out = _drive(tmp_path, monkeypatch, scenario)
    assert (status, run.answers) == (0, ["always", "blue"])
    assert "? which? → blue" in out


def test_slash_offers_commands_with_hints_then_the_commands_own_completions() -> None:
    async def complete(text: str) -> list[tuple[str, str, str]]:
        with create_app_session(output=DummyOutput()):
            completer = CommandCompleter(FakeRun(TerminalSurface(console=Console(file=StringIO()))))
            found = completer.get_completions_async(Document(text), CompleteEvent(text_inserted=True))
            return [(c.text, c.display_text, c.display_meta_text) async for c in found]

    async def main() -> None:
        async with asyncio.timeout(5):
            assert await complete("/") == [("count ", "/count", "count things"), ("later", "/later", "not now")]
            assert await complete("/co") == [("count ", "/count", "count things")]
            assert await complete("/count no") == [("notes.txt", "notes.txt", "a file")]
            assert await complete("hello") == []

    asyncio.run(main())


def test_prompts_typed_during_a_turn_run_after_it_in_the_order_they_were_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario(run: FakeRun, keys: PipeInput, screen: Screen) -> None:
        keys.send_text("work\r")
        await run.turn_started.wait()
        keys.send_text("/later one\r")
        await screen.shows("queued: it runs when the turn ends (Ctrl-C drops it)")
        keys.send_text("/later two\r")
        await screen.shows("queued: it runs when the turn ends, after 1 more (Ctrl-C drops it)")
        run.release.set()
        await screen.shows("ran /later two")
        keys.send_text(CTRL_D)

    status, run, out = _drive(tmp_path, monkeypatch, scenario)
    assert (status, run.submitted) == (0, ["work", "/later one", "/later two"])
    assert out.index("ran /later one") < out.index(
        "> /later two", out.index("queued: it runs when the turn ends, after 1 more")
    )


def test_a_queued_prompts_echo_and_its_queued_line_are_one_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two writes let the live area be redrawn between the echo and the line under it.
    writes: list[str] = []

    async def scenario(run: FakeRun, keys: PipeInput, screen: Screen) -> None:
        keys.send_text("work\r")
        await run.turn_started.wait()
        keys.send_text("/later one\r")
        await screen.shows("queued: it runs when the turn ends (Ctrl-C drops it)")
        writes.extend(screen.writes)
        run.release.set()
        await screen.shows("ran /later one")
        keys.send_text(CTRL_D)

    _drive(tmp_path, monkeypatch, scenario)
    [queued] = [write for write in writes if "queued: it runs" in write]
    assert "> /later one\nqueued: it runs when the turn ends (Ctrl-C drops it)" in queued, writes


def test_ctrl_c_during_a_turn_drops_what_was_queued_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario(run: FakeRun, keys: PipeInput, screen: Screen) -> None:
        keys.send_text("work\r")
        await run.turn_started.wait()
        keys.send_text("/later\r")
        await screen.shows("queued")
        keys.send_text(CTRL_C)
        await screen.shows("dropped the queued prompt (↑ brings it back): /later")
        run.release.set()
        keys.send_text("/count\r")
        await screen.shows("ran /count")
        keys.send_text(CTRL_D)

    status, run, _ = _drive(tmp_path, monkeypatch, scenario)
    assert (status, run.submitted) == (0, ["work", "/count"])


def test_esc_at_a_permission_prompt_answers_no_and_the_prompt_shows_the_always_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario(run: FakeRun, keys: PipeInput, screen: Screen) -> None:
        keys.send_text("ask\r")
        while [q.tool for q in run.surface.questions] != [None]:
            await asyncio.sleep(0)
        keys.send_text("\x1b")
        await screen.shows("declined bash")
        keys.send_text("r")
        await run.answered.wait()
        keys.send_text(CTRL_D)

    status, run, _ = _drive(tmp_path, monkeypatch, scenario)
    assert (status, run.answers) == (0, ["no", "red"])


def test_blanks_before_an_argument_are_not_part_of_what_is_completed() -> None:
    async def main() -> list[tuple[str, int]]:
        with create_app_session(output=DummyOutput()):
            completer = CommandCompleter(FakeRun(TerminalSurface(console=Console(file=StringIO()))))
            found = completer.get_completions_async(Document("/count   no"), CompleteEvent(text_inserted=True))
            return [(c.text, c.start_position) async for c in found]

    assert asyncio.run(main()) == [("notes.txt", -2)]


def test_a_preview_is_cut_to_its_height_with_a_count_and_a_huge_line_is_not_laid_out_whole() -> None:
    command = Preview(kind="text", text="echo one\n" + "x" * 5_000_000 + "\necho three")
    rows = [text for _, text in preview_rows(command, 20, 5)]
    assert rows == ["  echo one\n", *["  " + "x" * 20 + "\n"] * 3, "  … 2 more lines\n"]
    diff = Preview(kind="diff", text="--- a\n+++ a\n@@ -1 +1 @@\n-" + "y" * 50 + "\n+z", more=10)
    shown = preview_rows(diff, 20, 40)
    assert shown[3] == ("fg:ansired", "  -" + "y" * 18 + "…\n")
    assert shown[-1][1] == "  … 10 more lines\n"


def test_a_command_is_wrapped_after_a_blank_and_keeps_every_character() -> None:
    command = Preview(kind="text", text="for word in alpha beta gamma delta; do echo hi; done")
    rows = [text for _, text in preview_rows(command, 20, 10)]
    assert rows == ["  for word in alpha \n", "  beta gamma delta; \n", "  do echo hi; done\n"]
