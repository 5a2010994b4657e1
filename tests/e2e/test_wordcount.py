"""The seed's exit criterion: examples/plugins/wordcount driven end to end through the real
binary — the command, and a model turn in which the model calls its tool, refused without a
permission rule and run with one."""

from __future__ import annotations

from pathlib import Path

from tests.e2e._bingo import EXAMPLES, Sandbox, no_traceback
from tests.e2e._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model

TABLE = "notes.txt\nwhat        count\n----------  -----\nwords           9\nlines           3\ncharacters     44\n"


def _sandbox(tmp_path: Path) -> Sandbox:
    box = Sandbox(tmp_path)
    box.install(EXAMPLES / "wordcount")
    (box.project / "notes.txt").write_text("the quick brown fox\njumps over\nthe lazy dog\n", encoding="utf-8")
    return box


def test_wordcount_command_shows_the_counts(tmp_path: Path) -> None:
    result = _sandbox(tmp_path).run("-p", "/wordcount notes.txt")
    assert result.returncode == 0, result.stderr
    assert result.stdout == TABLE
    assert result.stderr == ""


def test_wordcount_command_is_listed_by_help_under_its_family(tmp_path: Path) -> None:
    result = _sandbox(tmp_path).run("-p", "/help")
    assert "/wordcount <path>  count the words in a file" in result.stdout


def test_wordcount_command_without_a_path_is_an_error_outcome(tmp_path: Path) -> None:
    result = _sandbox(tmp_path).run("-p", "/wordcount")
    assert result.returncode == 1
    assert "usage" in result.stderr.lower()
    assert no_traceback(result)


def test_the_settings_plugins_md_shows_reach_the_plugin_as_its_config(tmp_path: Path) -> None:
    # docs/plugins.md: {"plugins": {"wordcount": {"maxBytes": 1000000}}} reaches initialize.config.
    box = _sandbox(tmp_path)
    box.settings({"plugins": {"wordcount": {"maxBytes": 1000000}}})
    assert box.run("-p", "/wordcount notes.txt").stdout == TABLE
    box.settings({"plugins": {"wordcount": {"maxBytes": 10}}})
    small = box.run("-p", "/wordcount notes.txt")
    assert small.returncode == 1
    assert (
        small.stderr
        == "cannot read notes.txt: it is larger than maxBytes (10 bytes, in the plugins.wordcount settings)\n"
    )


def test_the_model_calling_count_is_refused_without_a_rule(tmp_path: Path) -> None:
    box = _sandbox(tmp_path)
    use_scripted_model(
        box, [[tool("c1", "plugin__wordcount__count", {"path": "notes.txt"})], [text("I was not allowed.")]]
    )
    result = box.run("-p", "how many words are in notes.txt?")
    assert result.returncode == 0, result.stderr
    assert "I was not allowed." in result.stdout
    assert "words" not in result.stdout
    [refused] = tool_results(model_requests(box)[1])
    assert refused.get("isError") is True
    assert (
        result_text(refused)
        == "plugin__wordcount__count is not allowed here: add it to permissions.allow or pass --allow"
    )


def test_the_model_calling_count_runs_with_a_rule(tmp_path: Path) -> None:
    box = _sandbox(tmp_path)
    use_scripted_model(
        box,
        [[tool("c1", "plugin__wordcount__count", {"path": "notes.txt"})], [text("There are 9 words.")]],
        permissions={"allow": ["plugin__wordcount__count"]},
    )
    result = box.run("-p", "how many words are in notes.txt?")
    assert result.returncode == 0, result.stderr
    assert TABLE in result.stdout  # the View, folded for --print
    assert result.stdout.endswith("There are 9 words.\n")
    [answered] = tool_results(model_requests(box)[1])
    assert result_text(answered) == "notes.txt: 9 words, 3 lines, 44 characters"


def test_the_model_calling_count_runs_with_allow_flag(tmp_path: Path) -> None:
    box = _sandbox(tmp_path)
    use_scripted_model(box, [[tool("c1", "plugin__wordcount__count", {"path": "notes.txt"})], [text("Done.")]])
    result = box.run("-p", "--allow", "plugin__wordcount__*", "count them")
    assert result.returncode == 0, result.stderr
    assert TABLE in result.stdout
