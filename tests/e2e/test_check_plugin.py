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
    *checks, said, summary = lines
    assert said == "  dataDir: a temporary directory, removed afterwards"
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
    assert len(report["checks"]) == len(text.stdout.splitlines()) - 2 == report["counts"]["pass"]
    assert report["dataDir"] == "a temporary directory, removed afterwards"
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
        "declarations.tool-names",
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
    # The check's dataDir is removed afterwards: the zoo keeps its marks here too.
    box.env["ZOO_RECORD"] = str(box.project)
    marks = box.project / "partial-lines-marks.txt"
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
        "(before), turn (start, end), session (start, end); fix: write one site and its points, e.g. "
        '{"site": "tool", "points": ["before"]}'
    ]
    assert result.stdout.splitlines()[-1].endswith(": not ready")


def test_a_manifest_bingo_refuses_is_checked_without_starting_anything(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    plugin = tmp_path / "Bad_Name"
    plugin.mkdir()
    (plugin / "plugin.json").write_text(
        json.dumps(
            {"name": "Bad_Name", "version": "1", "entrypoint": {}, "entry": {"command": "./run.sh", "argz": []}}
        ),
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


@pytest.mark.parametrize(
    ("manifest", "found"),
    [
        (
            '{\n "name": "mp",\n    oops\n}',
            "plugin.json is not JSON at line 3, column 5: Expecting property name enclosed in double quotes",
        ),
        (
            '{"name": "mp", "version": "1", "entry": {"command": "python3", "args": "main.py"}}',
            "plugin.json: wrong type at `$.entry.args`: expected `array`, got `str`",
        ),
    ],
)
def test_a_manifest_bingo_cannot_read_says_its_fix_once(tmp_path: Path, manifest: str, found: str) -> None:
    box = Sandbox(tmp_path)
    plugin = tmp_path / "mp"
    plugin.mkdir()
    (plugin / "plugin.json").write_text(manifest, encoding="utf-8")
    result = box.run("--check-plugin", str(plugin))
    assert result.returncode == 1
    [failed] = [line for line in result.stdout.splitlines() if line.startswith("✗ ")]
    assert failed.endswith(f"{plugin / found}; fix: see docs/plugins.md, section 'The manifest'"), failed
    assert failed.count("see docs/plugins.md") == 1


def test_the_manifest_plugins_md_shows_passes_the_check_with_the_example_beside_it(tmp_path: Path) -> None:
    import re
    import shutil

    from tests.e2e._bingo import REPO

    doc = (REPO / "docs" / "plugins.md").read_text(encoding="utf-8")
    section = doc.split("## The manifest", 1)[1]
    manifest = re.search(r"```json\n(.*?)```", section, re.S)
    assert manifest is not None
    plugin = tmp_path / "wordcount"
    shutil.copytree(EXAMPLES / "wordcount", plugin)
    (plugin / "plugin.json").write_text(manifest.group(1), encoding="utf-8")
    result = Sandbox(tmp_path).run("--check-plugin", str(plugin), "--call")
    assert result.returncode == 0, result.stdout
    assert not [line for line in result.stdout.splitlines() if line.startswith("✗ ")]


def test_check_plugin_usage_mistakes_are_one_line_and_exit_2(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    alone = box.run("--call")
    assert alone.returncode == 2
    assert (
        alone.stderr
        == "bingo: --call and --json go with --check-plugin DIR: write bingo --check-plugin DIR --call --json\n"
    )
    missing = box.run("--check-plugin", str(tmp_path / "nowhere"))
    assert missing.returncode == 2
    assert (
        missing.stderr
        == f"bingo: {tmp_path / 'nowhere'} is neither a directory nor a file: pass the plugin's directory (the one holding its plugin.json) or a .mcp.json\n"
    )
    both = box.run("--check-plugin", str(EXAMPLES / "wordcount"), "hello")
    assert both.returncode == 2
    assert both.stderr.startswith("bingo: --check-plugin takes no prompt")


DECLARES = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        result = {
            "protocol": 5, "name": "declares-badly", "version": "1",
            "tools": [
                {"name": "count.words", "description": "d", "inputSchema": {"type": "string"}},
                {"name": "bash", "inputSchema": {"type": "object", "required": ["x"], "properties": {}}},
            ],
            "commands": [{"name": "go", "args": {"kind": "text"}}],
            "command": [],
            "hooks": [{"name": "h", "site": "tool", "points": ["after", "submit"]}],
        }
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
    elif "id" in message:
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}}), flush=True)
"""


def test_each_kind_of_declaration_is_checked_and_each_mistake_named(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    plugin = tmp_path / "declares-badly"
    plugin.mkdir()
    (plugin / "main.py").write_text(DECLARES, encoding="utf-8")
    manifest = {
        "name": "declares-badly",
        "version": "1",
        "entry": {"command": "python3", "args": ["${PLUGIN_ROOT}/main.py"]},
    }
    (plugin / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")
    code, report = _report(box, plugin)
    assert code == 1
    by_id = {check["id"]: check for check in report["checks"]}
    shape = by_id["declarations.shape"]
    assert shape["status"] == "fail"
    assert "commands[0]: Invalid enum value 'text' - at `$.commands[0].args.kind`" in shape["detail"]
    assert by_id["declarations.keys"]["detail"].startswith(
        "the handshake has unknown key command (did you mean commands?)"
    )
    # With a declaration bingo cannot decode, it refuses the handshake: nothing else is read.
    assert "declarations.hooks" not in by_id
    fixed = DECLARES.replace('"kind": "text"', '"kind": "free"')
    (plugin / "main.py").write_text(fixed, encoding="utf-8")
    code, report = _report(box, plugin)
    by_id = {check["id"]: check for check in report["checks"]}
    assert by_id["declarations.shape"]["status"] == "pass"
    assert by_id["declarations.hooks"]["detail"].startswith("hook h refused: point 'submit' is not of site 'tool'")
    fitted = by_id["declarations.tool-names"]
    assert fitted["status"] == "warn"  # bingo sends it renamed (ADR-0011): it works
    assert fitted["detail"].startswith(
        "tool name 'count.words' becomes 'plugin__declares-badly__count.words', which model APIs refuse as it is"
    )
    assert fitted["fix"] == "use only letters, digits, _ and - (no __), in at most 40 characters"
    assert by_id["declarations.names"]["detail"] == "tool 'bash' refused: bash is bingo's own tool; rename it"
    schemas = by_id["declarations.schemas"]["detail"]
    assert "tool count.words's inputSchema has type 'string' at the top" in schemas
    assert "tool bash's inputSchema requires 'x', which `properties` does not have" in schemas
    assert by_id["behaviour.complete.go"] == {
        **by_id["behaviour.complete.go"],
        "status": "pass",
        "detail": "-32601: it offers none",
    }


def test_the_long_spelling_of_the_flag_reads_the_same(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    result = box.run(f"--check-plugin={EXAMPLES / 'wordcount'}", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["ok"] is True


def test_foreign_control_characters_never_reach_stdout_live(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    for args in ((), ("--json",)):
        result = box.run("--check-plugin", str(ZOO / "escapes"), "--call", *args)
        assert result.returncode == 1
        for bad in ("\x1b", "\x07", "\u202e", "\x9b"):
            assert bad not in result.stdout
    assert json.loads(result.stdout)["checks"]


@pytest.mark.parametrize(
    ("args", "env", "found"),
    [
        (
            ["${PLUGIN_ROOT}/missing.py"],
            {},
            "`entry.args[0]` names '${PLUGIN_ROOT}/missing.py', and the plugin's directory holds no such file",
        ),
        (["${PLUGIN_ROOT}/main.py", "$HOME/data"], {}, "`entry.args[1]` holds '$HOME', which bingo does not expand"),
        (
            ["${PLUGIN_ROOT}/main.py"],
            {"CACHE": "${PLUGIN_DIR}/cache"},
            "`entry.env.CACHE` holds '${PLUGIN_DIR}', which bingo does not expand",
        ),
    ],
)
def test_a_variable_bingo_does_not_expand_or_a_missing_file_is_named(
    tmp_path: Path, args: list[str], env: dict[str, str], found: str
) -> None:
    box = Sandbox(tmp_path)
    plugin = tmp_path / "expands"
    plugin.mkdir()
    (plugin / "main.py").write_text("", encoding="utf-8")  # it starts, and ends at once
    manifest = {"name": "expands", "version": "1", "entry": {"command": "python3", "args": args, "env": env}}
    (plugin / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")
    code, report = _report(box, plugin)
    assert code == 1
    [check] = [check for check in report["checks"] if check["id"] == "manifest.plugin-root"]
    assert (check["status"], check["detail"]) == ("fail", found)
