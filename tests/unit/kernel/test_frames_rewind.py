"""`RewindFrame` and `live`: a rewind sets the later frames aside (kept, out of the history),
and a rewind to a point before an earlier rewind brings them back (ADR-0044)."""

from __future__ import annotations

from bingo.kernel.frames import AssistantFrame, Frame, PromptFrame, RewindFrame, history, live
from bingo.wire import Message, TextBlock


def _said(text: str, turn: int) -> list[Frame]:
    return [
        PromptFrame(text=text, turn=turn),
        AssistantFrame(message=Message(role="assistant", content=[TextBlock(text=f"re {text}")]), turn=turn),
    ]


def _prompts(frames: list[Frame]) -> list[str]:
    return [f.text for f in live(frames) if isinstance(f, PromptFrame)]


def test_a_rewind_sets_the_frames_after_its_point_aside_and_the_history_goes_on_from_there() -> None:
    frames = [*_said("one", 1), *_said("two", 2), RewindFrame(to=2, turn=2), *_said("three", 3)]
    assert _prompts(frames) == ["one", "three"]
    assert len(history(frames)) == 4
    assert len(frames) == 7  # nothing was removed


def test_a_rewind_to_before_an_earlier_rewind_brings_back_what_it_set_aside() -> None:
    frames = [*_said("one", 1), *_said("two", 2), RewindFrame(to=2, turn=2)]
    frames.append(RewindFrame(to=4, turn=2))  # to before the first rewind (frame 4)
    assert _prompts(frames) == ["one", "two"]
    frames.append(RewindFrame(to=0, turn=2))
    assert _prompts(frames) == []
