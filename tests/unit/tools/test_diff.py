"""The diff write and edit show: unified, with context, cut when long, and correct: applied
back to the old text, it gives the new one."""

from __future__ import annotations

import random
import re

from bingo.tools._diff import MAX_DIFF_LINES, Span, eol_of, lines_of, to_eol, unified


def _whole(old: str, new: str) -> list[Span]:
    return [Span(start=0, end=len(old), new=new, line=0)]


def _numbered(n: int) -> str:
    return "".join(f"line {i}\n" for i in range(1, n + 1))


def apply(old: str, diff: str) -> str:
    """`old` patched by `diff`, checking every context and removed line and every header."""
    a = lines_of(old)
    out: list[str] = []
    at = 0
    lines = diff.split("\n")[2:]
    i = 0
    while i < len(lines):
        header = re.fullmatch(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", lines[i])
        assert header is not None, lines[i]
        old_size = 1 if header[2] is None else int(header[2])
        new_size = 1 if header[4] is None else int(header[4])
        start = int(header[1]) - 1 if old_size else int(header[1])
        assert start >= at
        out.extend(a[at:start])
        at = start
        assert len(out) == (int(header[3]) - 1 if new_size else int(header[3]))
        i += 1
        seen_old = seen_new = 0
        while i < len(lines) and not lines[i].startswith("@@"):
            mark, body = lines[i][0], lines[i][1:]
            last = i + 1 < len(lines) and lines[i + 1] == "\\ No newline at end of file"
            body += "" if last else "\n"
            if mark in " -":
                assert a[at] == body
                at += 1
                seen_old += 1
            if mark in " +":
                out.append(body)
                seen_new += 1
            i += 2 if last else 1
        assert (seen_old, seen_new) == (old_size, new_size)
    return "".join(out + a[at:])


def test_a_changed_line_is_shown_with_three_lines_of_context() -> None:
    old = _numbered(10)
    new = old.replace("line 5\n", "line five\n")
    diff = unified(old, _whole(old, new), "f.txt", "f.txt")
    assert (diff.added, diff.removed) == (1, 1)
    assert diff.text == "\n".join(
        [
            "--- f.txt",
            "+++ f.txt",
            "@@ -2,7 +2,7 @@",
            " line 2",
            " line 3",
            " line 4",
            "-line 5",
            "+line five",
            " line 6",
            " line 7",
            " line 8",
        ]
    )


def test_changes_far_apart_are_separate_hunks_and_near_ones_share_one() -> None:
    old = _numbered(40)
    far = old.replace("line 3\n", "x\n").replace("line 30\n", "y\n")
    assert unified(old, _whole(old, far), "f", "f").text.count("@@ -") == 2
    near = old.replace("line 3\n", "x\n").replace("line 9\n", "y\n")
    assert unified(old, _whole(old, near), "f", "f").text.count("@@ -") == 1


def test_a_missing_final_newline_is_marked() -> None:
    diff = unified("a\nb", _whole("a\nb", "a\nc"), "f", "f")
    assert diff.text.split("\n")[2:] == [
        "@@ -1,2 +1,2 @@",
        " a",
        "-b",
        "\\ No newline at end of file",
        "+c",
        "\\ No newline at end of file",
    ]


def test_a_new_file_is_all_added_lines_from_dev_null() -> None:
    diff = unified("", [Span(start=0, end=0, new="a\nb\n", line=0)], "/dev/null", "new.txt")
    assert diff.text == "--- /dev/null\n+++ new.txt\n@@ -0,0 +1,2 @@\n+a\n+b"


def test_crlf_lines_are_shown_without_their_carriage_returns() -> None:
    diff = unified("a\r\nb\r\n", _whole("a\r\nb\r\n", "a\r\nc\r\n"), "f", "f")
    assert "\r" not in diff.text
    assert diff.text.endswith(" a\n-b\n+c")


def test_a_long_diff_is_cut_and_says_how_much_more() -> None:
    old = _numbered(1000)
    new = old.replace("line", "row")
    diff = unified(old, _whole(old, new), "f", "f")
    shown = diff.text.split("\n")
    assert (diff.added, diff.removed) == (1000, 1000)
    assert len(shown) == MAX_DIFF_LINES + 1
    # 2 headers, 1 hunk header, 1000 removed and 1000 added lines in all.
    assert shown[-1] == f"[diff cut: {2003 - MAX_DIFF_LINES} more lines]"


def test_an_overlong_line_is_cut_in_the_diff() -> None:
    old = "x" * 5000 + "\n"
    diff = unified(old, _whole(old, "y\n"), "f", "f")
    assert "… [line cut: 4601 more characters]" in diff.text


def test_only_the_context_is_taken_from_between_spans() -> None:
    old = _numbered(100_000)
    at = old.index("line 50000\n")
    span = Span(start=at, end=at + len("line 50000\n"), new="changed\n", line=49_999)
    diff = unified(old, [span], "f", "f")
    assert diff.text.split("\n")[2] == "@@ -49997,7 +49997,7 @@"
    assert (diff.added, diff.removed) == (1, 1)


def test_random_diffs_apply_back_to_the_new_text() -> None:
    rnd = random.Random(15)
    for _ in range(3000):
        old_lines = [rnd.choice("abcde") + "\n" for _ in range(rnd.randint(0, 25))]
        if old_lines and rnd.random() < 0.3:
            old_lines[-1] = old_lines[-1][:-1]
        old = "".join(old_lines)
        bounds = [0]
        for line in old_lines:
            bounds.append(bounds[-1] + len(line))
        spans: list[Span] = []
        k = 0
        while k <= len(old_lines):
            if rnd.random() < 0.25:
                end = min(len(old_lines), k + rnd.randint(0, 4))
                new = "".join(rnd.choice("abcde") + "\n" for _ in range(rnd.randint(0, 4)))
                if end == len(old_lines) and new and rnd.random() < 0.3:
                    new = new[:-1]
                spans.append(Span(start=bounds[k], end=bounds[end], new=new, line=k))
                k = end + 1
            else:
                k += 1
        pieces: list[str] = []
        at = 0
        for span in spans:
            pieces += [old[at : span.start], span.new]
            at = span.end
        new_text = "".join(pieces) + old[at:]
        diff = unified(old, spans, "a", "b")
        if new_text == old:
            assert diff.text == ""
            continue
        body = diff.text.split("\n")[2:]
        assert (diff.removed, diff.added) == (
            sum(line[:1] == "-" for line in body),
            sum(line[:1] == "+" for line in body),
        )
        if "[diff cut" not in diff.text:
            assert apply(old, diff.text) == new_text


def test_line_endings_are_judged_by_most_lines_and_converted_whole() -> None:
    assert eol_of("a\r\nb\r\nc\n") == "\r\n"
    assert eol_of("a\r\nb\n") == "\n"
    assert eol_of("no newline") == "\n"
    assert to_eol("a\nb\r\nc", "\r\n") == "a\r\nb\r\nc"
    assert to_eol("a\r\nb\n", "\n") == "a\nb\n"
