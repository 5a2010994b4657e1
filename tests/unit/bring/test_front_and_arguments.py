"""Front matter (YAML, as real SKILL.md files and Claude Code's documented commands write it)
and a markdown command's arguments (`$ARGUMENTS`, `$1`…`$9` by shell-style words, the
appended `ARGUMENTS:` line)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bingo.bring import expand
from bingo.bring._front import FRONT_MAX, FrontError, split_front


def test_a_folded_multi_line_description_reads_as_one_line_of_text() -> None:
    front = split_front("---\nname: pdf\ndescription: >-\n  Extract text\n  and tables: any PDF.\n---\n# Body\n")
    assert front.present and front.fields == {"name": "pdf", "description": "Extract text and tables: any PDF."}
    assert front.body == "# Body\n"


def test_a_literal_block_quotes_and_comments_are_yaml_as_yaml_reads_them() -> None:
    front = split_front(
        "---\n# a comment\nname: \"x\"\ndescription: |-\n  line one\n  line two\nlicense: 'MIT: see'\n---\nb"
    )
    assert front.fields == {"name": "x", "description": "line one\nline two", "license": "MIT: see"}


def test_claude_codes_documented_argument_hint_which_is_not_yaml_reads_as_the_text_written() -> None:
    # `[issue-number] [priority]` is a flow sequence followed by more: YAML refuses it; Claude
    # Code's docs write it so, and its reader retries with the value quoted, as this does.
    front = split_front("---\nargument-hint: [issue-number] [priority]\ndescription: Fix an issue\n---\nFix $1\n")
    assert front.fields == {"argument-hint": "[issue-number] [priority]", "description": "Fix an issue"}


def test_a_file_without_front_matter_is_all_body() -> None:
    front = split_front("Review this code.\n---\nnot front matter\n")
    assert not front.present and front.fields == {} and front.body.startswith("Review")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("---\nname: x\n", "not closed"),
        ("---\n- a\n- b\n---\n", "not a mapping"),
        ("---\nname: x\n  bad: [\n---\n", "not valid YAML (line 3)"),
        ("---\n" + "k: v\n" * (FRONT_MAX // 4) + "---\n", "longer than"),
    ],
)
def test_front_matter_that_cannot_be_read_says_why(text: str, words: str) -> None:
    with pytest.raises(FrontError, match=words.replace("(", r"\(").replace(")", r"\)")):
        split_front(text)


def test_yaml_tags_that_would_build_objects_build_nothing_and_run_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    front = split_front(f"---\nname: !!python/object/apply:os.system ['touch {marker}']\n---\n")
    assert front.fields["name"] == f"!!python/object/apply:os.system ['touch {marker}']"  # text, as the retry quotes it
    with pytest.raises(FrontError):
        split_front(f"---\nname: !!python/object/apply:os.system\n  - touch {marker}\n---\n")
    assert not marker.exists()


@pytest.mark.parametrize(
    ("body", "args", "prompt"),
    [
        (
            "Fix issue #$1 with priority $2.",
            '123 "very high"',
            'Fix issue #123 with priority very high.\n\nARGUMENTS: 123 "very high"',
        ),
        ("Review $ARGUMENTS now", "src/a.py src/b.py", "Review src/a.py src/b.py now"),
        ("Review $ARGUMENTS; first $1", "a b", "Review a b; first a"),
        ("No arguments here.", "", "No arguments here."),
        ("Missing $3 is empty.", "one", "Missing  is empty.\n\nARGUMENTS: one"),
        # What the person typed is never expanded again.
        ("Say $ARGUMENTS", "$1 and $ARGUMENTS", "Say $1 and $ARGUMENTS"),
        # An unclosed quote splits at blanks, never an error.
        ("First: $1", "'oops rest", "First: 'oops\n\nARGUMENTS: 'oops rest"),
        # Nothing in the body is run: !`cmd` and @file stay text.
        ("!`rm -rf /` @secrets.txt $ARGUMENTS", "x", "!`rm -rf /` @secrets.txt x"),
    ],
)
def test_arguments_expand_as_claude_code_documents(body: str, args: str, prompt: str) -> None:
    assert expand(body, args) == prompt
