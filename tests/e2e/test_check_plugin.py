"""`bingo --check-plugin DIR [--call] [--json]` (issue 18, INTERFACE.md §1): the example
plugins pass every check, a failed check is a ✗ line with its fix and exit 1, `--json` is the
same report as one document, and no tool is called without `--call`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e._bingo import EXAMPLES, TEST_PLUGINS, Sandbox, no_traceback

ZOO = TEST_PLUGINS / "zoo"
MISTAKES = TEST_PLUGINS / "mistakes"


def _examples() -> list[Path]:
    return sorted(path for path in EXAMPLES.iterdir() if (path / "plugin.json").is_file())


def _report(box: Sandbox, directory: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = box.run("--check-plugin", str(directory), *args, "--json")
    assert no_traceback(result)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


@pytest.mark.parametrize("example", _examples(), ids=lambda path: path.name)
def test_each_example_plugin_passes_every_check_with_call(tmp_path: Path, example: Path) -> None:
    box = Sandbox(tmp_path)
    (box.project / "notes.txt").write_text("a b c\n", encoding="utf-8")
    result = box.run("--check-plugin", str(example), "--call")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    *checks, summary = lines
    assert checks and all(line.startswith("✓ ") for line in checks), result.stdout
    assert any(line.startswith("✓ call: ") for line in checks)  # its tools were called
    assert summary.startswith(f"{example.name}: {len(checks)} checks, {len(checks)} passed, 0 failed")
    assert summary.endswith(": ready")


def test_the_json_report_holds_every_check_of_the_text(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    wordcount = EXAMPLES / "wordcount"
    code, report = _report(box, wordcount, "--call")
    text = box.run("--check-plugin", str(wordcount), "--call")
    assert code == 0 and report["ok"] is True and report["called"] is True
    assert report["plugin"] == "wordcount"
    assert len(report["checks"]) == len(text.stdout.splitlines()) - 1 == report["counts"]["pass"]
    ids = {check["id"] for check in report["checks"]}
    for expected in (
        "manifest.name",
        "manifest.directory",
        "manifest.command",
        "start.quiet",
        "start.handshake",
        "start.protocol",
        "start.name",
        "declarations.shape",
        "declarations.keys",
        "declarations.hooks",
        "declarations.names",
        "declarations.schemas",
        "behaviour.unknown-method",
        "behaviour.ids",
        "behaviour.lines",
        "behaviour.stdout",
        "behaviour.extra-params",
        "behaviour.complete.wordcount",
        "behaviour.eof",
        "behaviour.stderr",
        "call.count.answer",
        "call.count.display",
        "call.count.cancel",
        "call.count.progress",
    ):
        assert expected in ids


def test_no_tool_is_called_without_call(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    marks = box.bingo_home / "data" / "plugins" / "partial-lines" / "marks.txt"
    code, report = _report(box, ZOO / "partial-lines")
    assert code == 0 and report["called"] is False
    assert not any(check["group"] == "call" for check in report["checks"])
    assert "called poke" not in (marks.read_text(encoding="utf-8") if marks.exists() else "")
    text = box.run("--check-plugin", str(ZOO / "partial-lines"))
    assert "(no tool was called: pass --call to call each tool with an input made from its schema)" in text.stdout
    _report(box, ZOO / "partial-lines", "--call")
    assert marks.read_text(encoding="utf-8").count("called poke") == 2  # cancelled once, then called


def test_a_failed_check_is_a_line_with_its_fix_and_exit_1(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    result = box.run("--check-plugin", str(MISTAKES / "hook-site-dotted"))
    assert result.returncode == 1
    failed = [line for line in result.stdout.splitlines() if line.startswith("✗ ")]
    assert failed == [
        "✗ declarations: every hook names a site and its points: hook guard refused: site 'tool.before' is "
        "not a site; a hook names one site and its points: tool (before, after), prompt (submit), command "
        "(before), turn (start, end), session (start, end); fix: write e.g. "
        '{"site": "tool", "points": ["before"]}'
    ]
    assert result.stdout.splitlines()[-1].endswith(": not ready")


def test_a_manifest_bingo_refuses_is_checked_without_starting_anything(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    plugin = tmp_path / "Bad_Name"
    plugin.mkdir()
    (plugin / "plugin.json").write_text(
        json.dumps({"name": "Bad_Name", "version": "1", "entrypoint": {}, "entry": {"command": "./run.sh", "argz": []}}),
        encoding="utf-8",
    )
    code, report = _report(box, plugin)
    assert code == 1
    by_id = {check["id"]: check for check in report["checks"]}
    assert by_id["manifest.name"]["status"] == "fail"
    assert "is not a plugin name" in by_id["manifest.name"]["detail"]
    assert by_id["manifest.keys"]["detail"].startswith("the manifest has unknown key entrypoint (did you mean entry?)")
    assert "`entry` has unknown key argz (did you mean args?)" in by_id["manifest.keys"]["detail"]
    command = by_id["manifest.command"]
    assert (command["detail"], command["fix"]) == (
        "`entry.command` './run.sh' is a relative path",
        "write ${PLUGIN_ROOT}/run.sh for a file in the plugin's directory",
    )
    assert by_id["start"]["status"] == "skip"
    assert not (box.bingo_home / "data" / "logs" / "plugin-Bad_Name.log").exists()


def test_check_plugin_usage_mistakes_are_one_line_and_exit_2(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    alone = box.run("--call")
    assert alone.returncode == 2
    assert alone.stderr == "bingo: --call and --json go with --check-plugin DIR: write bingo --check-plugin DIR --call --json\n"
    missing = box.run("--check-plugin", str(tmp_path / "nowhere"))
    assert missing.returncode == 2
    assert missing.stderr == f"bingo: {tmp_path / 'nowhere'} is not a directory: pass the plugin's directory, the one holding its plugin.json\n"
    both = box.run("--check-plugin", str(EXAMPLES / "wordcount"), "hello")
    assert both.returncode == 2
    assert both.stderr.startswith("bingo: --check-plugin takes no prompt")
