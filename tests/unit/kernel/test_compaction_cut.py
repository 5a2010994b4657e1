"""Cutting a tool result to its budget: whole lines where possible, images kept, display
untouched, and a note that says how much was cut and how to get the rest for each tool."""

from __future__ import annotations

import re

from bingo.kernel._cut import cut_output
from bingo.wire import ImagePart, TextPart, TextView, ToolOutput

_NOTE = re.compile(
    r"\n\[bingo cut this result to fit the context: (\d+) of its (\d+) characters were left out; one result may hold about (\d+) characters\. (.*)\]$"
)


def _numbered(first: int, count: int) -> str:
    return "\n".join(f"{n:6}\tline {n} " + "." * 30 for n in range(first, first + count))


def _text(output: ToolOutput) -> str:
    return "".join(p.text for p in output.parts if isinstance(p, TextPart))


def test_a_result_that_fits_is_the_same_object() -> None:
    output = ToolOutput(parts=[TextPart(text="x" * 3000)])
    assert cut_output(output, name="bash", source="builtin", input={}, chars=3000) is output


def test_read_is_told_the_line_after_the_last_whole_line_it_kept_from_its_own_offset() -> None:
    output = ToolOutput(parts=[TextPart(text=_numbered(101, 500))])
    cut = _text(cut_output(output, name="read", source="builtin", input={"path": "f", "offset": 101}, chars=4000))
    note = _NOTE.search(cut)
    assert note is not None
    kept = cut[: note.start()].split("\n")
    last = int(kept[-1].split("\t")[0])
    assert kept[-1] == f"{last:6}\tline {last} " + "." * 30  # a whole line
    whole = last - 100
    assert (
        note[4]
        == f"The rest starts at line {last + 1}: read again with offset={last + 1} and limit={whole - whole // 10} to see about as much as fits."
    )
    assert int(note[1]) + len(cut[: note.start()]) == int(note[2])


def test_a_cut_with_no_line_break_near_keeps_the_partial_line_and_read_goes_on_from_it() -> None:
    text = "     1\tshort\n     2\t" + "y" * 10_000
    cut = _text(
        cut_output(
            ToolOutput(parts=[TextPart(text=text)]), name="read", source="builtin", input={"path": "f"}, chars=3000
        )
    )
    note = _NOTE.search(cut)
    assert note is not None and len(cut[: note.start()]) == 3000
    assert note[4].startswith("The rest starts at line 2: read again with offset=2 and limit=1 ")


def test_images_and_display_are_kept_and_later_text_parts_dropped() -> None:
    image = ImagePart(media_type="image/png", data="AAAA")
    output = ToolOutput(
        parts=[TextPart(text="a" * 2500), image, TextPart(text="b" * 2500)], display=TextView(text="all of it")
    )
    cut = cut_output(output, name="plugin__p__shot", source="p", input={}, chars=3000)
    assert cut.display == output.display and image in cut.parts
    text = _text(cut)
    assert text.startswith("a" * 2500 + "b" * 500)
    assert text.endswith("To see the rest, call plugin__p__shot again asking for less (narrower input).]")


def test_the_built_in_finders_are_told_what_to_narrow() -> None:
    big = ToolOutput(parts=[TextPart(text="z\n" * 5000)])
    for name, start in (
        ("bash", "To see the rest, run the command again"),
        ("grep", "To see the rest, search again more narrowly"),
        ("glob", "To see the rest, ask again more narrowly"),
    ):
        note = _NOTE.search(_text(cut_output(big, name=name, source="builtin", input={}, chars=2000)))
        assert note is not None and note[4].startswith(start)


def test_a_plugin_tool_named_read_is_not_told_read_offsets() -> None:
    note = _NOTE.search(
        _text(
            cut_output(ToolOutput(parts=[TextPart(text="q\n" * 5000)]), name="read", source="p", input={}, chars=2000)
        )
    )
    assert note is not None and note[4] == "To see the rest, call read again asking for less (narrower input)."


def test_no_budget_cuts_below_the_floor() -> None:
    output = ToolOutput(parts=[TextPart(text="w" * 1999)])
    assert cut_output(output, name="bash", source="builtin", input={}, chars=10) is output
