"""Per-call notifications are routed by id, and a progress flood is cut and said once."""

from __future__ import annotations

from bingo.bridge._link import PROGRESS_PER_SECOND, Calls, Ended
from bingo.kernel.errors import ConnectionClosed
from bingo.kernel.interfaces import ToolCall
from bingo.wire import ToolProgressParams


def test_a_progress_flood_is_cut_to_the_limit_and_said_once() -> None:
    floods: list[None] = []
    shown: list[str] = []
    calls = Calls(on_flood=lambda: floods.append(None))
    calls.begin(ToolCall(call_id="c1", input={}, cwd="/", session="s", turn=1, progress=shown.append))
    for n in range(PROGRESS_PER_SECOND * 3):
        calls._progress(ToolProgressParams(call_id="c1", tail=f"line {n}"))
    assert len(shown) == PROGRESS_PER_SECOND
    assert floods == [None]


def test_progress_for_a_call_that_is_not_running_is_ignored() -> None:
    shown: list[str] = []
    calls = Calls()
    calls.begin(ToolCall(call_id="c1", input={}, cwd="/", session="s", turn=1, progress=shown.append))
    calls._progress(ToolProgressParams(call_id="other", tail="x"))
    calls.end("c1")
    calls._progress(ToolProgressParams(call_id="c1", tail="late"))
    assert shown == []


def test_an_ended_plugins_error_says_its_last_words_and_a_calls_line_leaves_them_out() -> None:
    ended = Ended("plugin p exited with code 1", "log: /l", said='its stderr said: "boom"')
    assert ended.line() == 'plugin p exited with code 1: its stderr said: "boom"; log: /l'
    unsaid = ended.unsaid()
    assert unsaid.line() == "plugin p exited with code 1: log: /l"
    assert isinstance(unsaid, ConnectionClosed)
    assert Ended("plugin p exited with code 1", "log: /l").line() == "plugin p exited with code 1: log: /l"
