"""What the person sees of a tool call, through the real binary (issue 25 items 2 and 3,
ADR-0034): a permission question shows what it approves above its keys (an edit's diff, a
command whole, a plugin tool's input as JSON, the refusal where the tool would refuse),
computed without writing anything; a finished call is one tidy line, never raw JSON; the
first lines of a result are shown, and `/result` shows one whole; the same under `-p`,
plain."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from tests.e2e._bingo import EXAMPLES, TEST_PLUGINS, Sandbox, no_traceback
from tests.e2e._scripted import text, tool, use_scripted_model
from tests.e2e.test_terminal import terminal
from tests.support.model_server import Reply

CALC = "def add(a, b):\n    return a - b\n\n\nprint(add(1, 2))\n"


def test_an_edit_question_shows_the_diff_above_its_keys_and_writes_nothing_before_yes(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.env.pop("NO_COLOR")  # colours on: the diff's lines are coloured
    calc = box.project / "calc.py"
    calc.write_text(CALC, encoding="utf-8")
    replies: list[Reply] = [
        [("tool", "r1", "read", {"path": "calc.py"})],
        [("tool", "e1", "edit", {"path": "calc.py", "oldString": "return a - b", "newString": "return a + b"})],
        [("text", "Fixed.")],
    ]
    with terminal(box, replies) as screen:
        screen.child.send("fix add\r")
        screen.expect(
            r"bingo wants to run edit\n +--- calc\.py\n +\+\+\+ calc\.py\n +@@ -1,5 \+1,5 @@\n +def add\(a, b\):\n +-    return a - b\n +\+    return a \+ b\n(?: *\n){2} +print\(add\(1, 2\)\)\n +\[y\] yes, once"
        )
        assert re.search(r"\x1b\[[0-9;]*3[12]m\s*[-+]    return a [-+] b", screen.raw)  # red and green
        assert calc.read_text(encoding="utf-8") == CALC  # the diff was computed, nothing written
        screen.child.send("y")
        screen.expect(r"✓ edit calc\.py \(\+1 −1\) · [0-9.]+ s")
        screen.expect(r"Fixed\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
        assert '"oldString"' not in screen.text()  # never the raw input
    assert calc.read_text(encoding="utf-8") == CALC.replace("a - b", "a + b")


def test_an_edit_the_tool_would_refuse_shows_why_not_the_files_lines(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    secret = box.project / "settings.py"
    before = "TOKEN = 'hunter2'\nDEBUG = False\n"
    secret.write_text(before, encoding="utf-8")
    # Never read in this session: edit would refuse it, so its preview reads none of it.
    replies: list[Reply] = [
        [("tool", "e1", "edit", {"path": "settings.py", "oldString": "DEBUG = False", "newString": "DEBUG = True"})],
        [("text", "Not changed.")],
    ]
    with terminal(box, replies) as screen:
        screen.child.send("debug on\r")
        screen.expect(
            r"bingo wants to run edit\n +edit will refuse this: settings\.py has not been read in this session\."
        )
        screen.expect(
            r'\{\n +"path": "settings\.py",\n +"oldString": "DEBUG = False",\n +"newString": "DEBUG = True"\n +\}\n +\[y\] yes, once'
        )
        screen.child.send("n")
        screen.expect(r"Not changed\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
        assert "hunter2" not in screen.text()
    assert secret.read_text(encoding="utf-8") == before


def test_a_multi_line_command_is_asked_about_whole_and_its_result_is_shown(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"sandbox": {"mode": "off"}})  # without a sandbox, bash is asked about
    command = 'for word in alpha beta; do\n  echo "got $word"\ndone'
    replies: list[Reply] = [[("tool", "b1", "bash", {"command": command})], [("text", "Looped.")]]
    with terminal(box, replies) as screen:
        screen.child.send("loop\r")
        screen.expect(
            r"bingo wants to run bash\n +for word in alpha beta; do\n +  echo \"got \$word\"\n +done\n +\[y\] yes, once"
        )
        screen.child.send("y")
        screen.expect(r"✓ bash for word in alpha beta; do \(\+2 lines\) · [0-9.]+ s *\n +⎿ got alpha *\n +got beta")
        screen.expect(r"Looped\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0


def test_a_long_result_shows_its_first_lines_and_slash_result_shows_it_whole(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"sandbox": {"mode": "off"}, "permissions": {"allow": ["bash"]}})
    replies: list[Reply] = [
        [("tool", "b1", "bash", {"command": "seq 1 50; printf 'bell\\033]0;pwned\\007\\n'"})],
        [("text", "Counted.")],
    ]
    with terminal(box, replies) as screen:
        screen.child.send("count\r")
        screen.expect(
            r"✓ bash seq 1 50; printf .*\n +⎿ 1 *\n +2 *\n +3 *\n +4 *\n +5 *\n +6 *\n +… 46 more lines \(/result 1 shows it whole\)"
        )
        screen.expect(r"Counted\.")
        screen.prompt()
        assert "\n    7\n" not in screen.text()
        screen.child.send("/result\r")
        screen.expect(r"result 1:\n1 *\n2 *\n(?:\d+ *\n)*50 *\nbell\\x1b\]0;pwned\\x07 *\n\[exit code 0\]")
        screen.prompt()
        screen.child.send("/result 9\r")
        screen.expect(r"there is no result 9 to show")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
        assert "\x1b]0;pwned" not in screen.raw


def test_a_plugin_tools_question_shows_its_input_as_indented_json_and_its_result_lines(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(EXAMPLES / "wordcount")
    (box.project / "notes.txt").write_text("a b c\n", encoding="utf-8")
    replies: list[Reply] = [[("tool", "t1", "plugin__wordcount__count", {"path": "notes.txt"})], [("text", "Three.")]]
    with terminal(box, replies) as screen:
        screen.child.send("count notes\r")
        screen.expect(
            r'bingo wants to run plugin__wordcount__count\n +\{\n +"path": "notes\.txt"\n +\}\n +\[y\] yes, once'
        )
        screen.child.send("y")
        screen.expect(r"✓ plugin__wordcount__count notes\.txt · [0-9.]+ s")
        screen.expect(r"Three\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0


def test_print_shows_each_call_as_a_tidy_line_and_the_first_lines_of_its_result(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(EXAMPLES / "wordcount")
    (box.project / "calc.py").write_text(CALC, encoding="utf-8")
    use_scripted_model(
        box,
        [
            [tool("r1", "read", {"path": "calc.py"})],
            [
                tool(
                    "e1",
                    "edit",
                    {
                        "path": "calc.py",
                        "oldString": "    return a - b\n",
                        "newString": "    s = a + b\n    return s\n",
                    },
                )
            ],
            [tool("w1", "write", {"path": "notes.md", "content": "# notes\n\none two\n"})],
            [tool("b1", "bash", {"command": "seq 1 9; printf 'x\\033[2Jy\\n'"})],
            [tool("c1", "plugin__wordcount__count", {"path": "notes.md"})],
            [tool("r2", "read", {"path": "missing.py"})],
            [text("done.")],
        ],
        sandbox={"mode": "off"},
    )
    result = box.run(
        "-p", "--allow", "edit", "--allow", "write", "--allow", "bash", "--allow", "plugin__wordcount__count", "go"
    )
    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    lines = result.stderr.splitlines()
    assert "✓ read calc.py" in lines
    assert "✓ edit calc.py (+2 −1)" in lines
    assert "✓ write notes.md (3 lines)" in lines
    at = lines.index("✓ bash seq 1 9; printf 'x\\033[2Jy\\n'")
    assert lines[at + 1 : at + 8] == ["  ⎿ 1", "    2", "    3", "    4", "    5", "    6", "    … 5 more lines"]
    assert "✓ plugin__wordcount__count notes.md" in lines  # its View is drawn, on stdout
    [failed] = [line for line in lines if line.startswith("✗ ")]
    assert failed.startswith(f"✗ read missing.py: {box.project / 'missing.py'} does not exist.")
    assert re.search(r"words +4", result.stdout)
    assert "\x1b" not in result.stderr + result.stdout
    assert not any(line.startswith("{") or '"path"' in line for line in lines)
    assert result.stdout.endswith("done.\n")


def test_print_escapes_a_results_controls(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    use_scripted_model(
        box,
        [[tool("b1", "bash", {"command": "printf 'a\\033]0;pwned\\007b\\n'"})], [text("ok")]],
        sandbox={"mode": "off"},
    )
    result = box.run("-p", "--allow", "bash", "go")
    assert result.returncode == 0, result.stderr
    assert "  ⎿ a\\x1b]0;pwned\\x07b" in result.stderr.splitlines()
    assert "\x1b" not in result.stderr


def test_a_write_question_shows_the_new_content_escaped_and_cut_to_the_screen_with_a_count(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    content = "title \x1b]0;pwned\x07\n" + "".join(f"line {n}\n" for n in range(1, 100))
    replies: list[Reply] = [[("tool", "w1", "write", {"path": "notes.md", "content": content})], [("text", "Written.")]]
    with terminal(box, replies) as screen:  # 40 rows: the preview keeps to 32
        screen.child.send("write notes\r")
        shown = screen.expect(
            r"bingo wants to run write\n +--- /dev/null\n +\+\+\+ notes\.md\n +@@ -0,0 \+1,100 @@\n +\+title \\x1b\]0;pwned\\x07\n((?: +\+line \d+\n)+) +… (\d+) more lines\n +\[y\] yes, once"
        )
        assert len(shown.group(1).splitlines()) + 4 + 1 == 32  # headers, title, lines, the count
        assert int(shown.group(2)) == 103 - 31
        assert not (box.project / "notes.md").exists()  # nothing written, no directory made
        screen.child.send("y")
        screen.expect(r"✓ write notes\.md \(100 lines\) · [0-9.]+ s")
        screen.expect(r"Written\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
        assert "\x1b]0;pwned" not in screen.raw
    assert (box.project / "notes.md").read_text(encoding="utf-8") == content


def _mcp_raw(box: Sandbox) -> None:
    root = box.install(TEST_PLUGINS / "mcp-raw")
    manifest = json.loads((root / "plugin.json").read_text(encoding="utf-8"))
    manifest["mcp"]["command"] = sys.executable
    (root / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_an_mcp_tools_result_is_shown_on_the_terminal_and_under_print(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _mcp_raw(box)
    use_scripted_model(
        box,
        [[tool("g1", "plugin__mcp-raw__grow", {})], [text("grown.")]],
        permissions={"allow": ["plugin__mcp-raw__*"]},
    )
    result = box.run("-p", "grow")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    at = lines.index("✓ plugin__mcp-raw__grow")
    assert lines[at + 1] == "  ⎿ grew"
    replies: list[Reply] = [[("tool", "g1", "plugin__mcp-raw__grow", {})], [("text", "Grown.")]]
    box.settings({"permissions": {"allow": ["plugin__mcp-raw__*"]}})
    with terminal(box, replies) as screen:
        screen.child.send("grow\r")
        screen.expect(r"✓ plugin__mcp-raw__grow · [0-9.]+ s *\n +⎿ grew *\n")
        screen.expect(r"Grown\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0


def test_check_plugin_says_what_the_person_sees_of_a_tool_with_no_display(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.env["ZOO_RECORD"] = str(box.project)
    result = box.run("--check-plugin", str(TEST_PLUGINS / "zoo" / "partial-lines"), "--call", "--json")
    assert no_traceback(result)
    [display] = [check for check in json.loads(result.stdout)["checks"] if check["id"] == "call.poke.display"]
    assert (
        display["detail"]
        == "none: the person sees the first lines of its text parts under the call, and /result shows them whole"
    )
