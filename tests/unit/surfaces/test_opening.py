"""What the terminal opens with: the banner, a continued session's recap, the status line."""

from __future__ import annotations

from io import StringIO

import msgspec
from rich.console import Console
from rich.text import Text

from bingo.surfaces.terminal import Opening
from bingo.surfaces.terminal._opening import banner, recap, status
from bingo.wire import ImageBlock, Message, TextBlock, TextPart, ToolResultBlock, ToolUseBlock, Usage


def _shown(*drawn: object) -> str:
    out = StringIO()
    console = Console(file=out, width=80, color_system=None)
    for one in drawn:
        console.print(one, soft_wrap=isinstance(one, Text))  # as the surface prints
    return out.getvalue()


_BASE = Opening(version="1.2.3", provider="anthropic", model="claude-x", cwd="/home/ann/src/app", home="/home/ann")


def _opening(**fields: object) -> Opening:
    return msgspec.structs.replace(_BASE, **fields)


def test_the_banner_names_version_model_cwd_and_session() -> None:
    assert _shown(banner(_opening())) == "bingo 1.2.3 · claude-x via anthropic · ~/src/app · new session\n"
    unset = _opening(
        provider=None,
        model=None,
        unset="no model provider is configured: set ANTHROPIC_API_KEY",
        cwd="/srv/x\x1b[2J",
        session="abc",
    )
    assert (
        _shown(banner(unset))
        == "bingo 1.2.3 · no model: no model provider is configured: set ANTHROPIC_API_KEY · /srv/x\\x1b[2J · continuing session abc\n"
    )
    assert "· /home/annex ·" in _shown(banner(_opening(cwd="/home/annex")))  # ~ only for the home itself


def _user(text: str) -> Message:
    return Message(role="user", content=[TextBlock(text=text)])


def _said(text: str) -> Message:
    return Message(role="assistant", content=[TextBlock(text=text)])


def test_a_recap_shows_the_last_exchanges_with_calls_as_one_line_each() -> None:
    past = [
        _user("first"),
        _said("one"),
        _user("second"),
        _said("two"),
        _user('<context title="git">\nbranch main\n</context>\n\nthird'),
        Message(
            role="assistant",
            content=[
                TextBlock(text="Counting."),
                ToolUseBlock(id="t1", name="bash", input={"command": "wc -w\x1b[2J notes"}),
                ToolUseBlock(id="t2", name="read", input={"path": "x"}),
            ],
        ),
        Message(
            role="user",
            content=[
                ToolResultBlock(tool_use_id="t1", parts=[TextPart(text="3")]),
                ToolResultBlock(tool_use_id="t2", parts=[TextPart(text="no")], is_error=True),
            ],
        ),
        _said("It has **3 words**."),
        _user("fourth"),
        _said("four"),
    ]
    lines = [line.rstrip() for line in _shown(*recap(_opening(past=past))).splitlines()]
    assert lines[0].startswith("the conversation so far · 1 earlier prompt not shown ───")
    assert lines[1:-1] == [
        "> second",
        "two",
        "> third",
        "Counting.",
        "✓ bash wc -w\\x1b[2J notes",
        "✗ read x",
        "It has 3 words.",
        "> fourth",
        "four",
    ]
    assert set(lines[-1]) == {"─"}
    assert recap(_opening()) == []


def test_the_status_line_counts_tokens_in_thousands() -> None:
    assert status(_opening(), Usage()) == "claude-x · 0 in · 0 out"
    assert status(_opening(), Usage(input_tokens=1234, output_tokens=340)) == "claude-x · 1.2k in · 340 out"
    assert status(_opening(), Usage(input_tokens=2_000_000, output_tokens=12_000)) == "claude-x · 2M in · 12k out"
    assert (
        status(_opening(), Usage(input_tokens=5400, output_tokens=7, cache_read_tokens=5000))
        == "claude-x · 5.4k in (5k cached) · 7 out"
    )
    assert status(_opening(provider=None, model=None), Usage()) == "no model · 0 in · 0 out"
    assert status(None, Usage()) == "no model · 0 in · 0 out"


def test_a_recap_names_a_prompts_images_and_counts_an_image_only_prompt_as_one() -> None:
    png = ImageBlock(media_type="image/png", data="iVBORw0KGgo=")
    past = [
        Message(role="user", content=[png, TextBlock(text="what is this?")]),
        _said("A pixel."),
        Message(role="user", content=[ImageBlock(media_type="image/gif\x1b[2J", data="R0lG")]),
        _said("A GIF."),
    ]
    lines = [line.rstrip() for line in _shown(*recap(_opening(past=past))).splitlines()]
    assert lines[0].startswith("the conversation so far ───")  # two prompts, both shown
    assert lines[1:-1] == [
        "> [an image, image/png]",
        "> what is this?",
        "A pixel.",
        "> [an image, image/gif\\x1b[2J]",
        "A GIF.",
    ]
