"""How a person types and answers on the terminal, through the real binary in a pty
(issue 25, items 9, 10, 11; ADR-0035): the keys for a newline in the prompt, a Tab pressed
while a plugin's completions load, `/model`, what Ctrl-D and Ctrl-C leave on the screen,
and one way to answer every question (single keys, Esc is no; a "no" with words for the
model; a hook's reason shown; a refused prompt put back in the input).

Evidence is taken from what the model server received (the prompt's text, the tool result
and the model a request named), not from bingo's words alone.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e._bingo import EXAMPLES, TEST_PLUGINS, Sandbox
from tests.e2e._declares import install_declaring
from tests.e2e.test_terminal import Screen, terminal
from tests.support.model_server import ModelServer, Reply

WAIT = 10.0


def _prompts(server: ModelServer) -> list[str]:
    """The text of the last user message of every request the model received."""
    found: list[str] = []
    for body in server.bodies:
        content = body["messages"][-1]["content"]
        found.append(content if isinstance(content, str) else "".join(part.get("text", "") for part in content))
    return found


def _tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        block
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def _result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


def _bye(screen: Screen) -> None:
    screen.prompt()
    screen.child.sendcontrol("d")
    assert screen.exits() == 0


# --- item 9: a newline in the prompt -------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "how"),
    [
        ("\x1b[13;2u", "Shift-Enter, CSI u"),
        ("\x1b[27;2;13~", "Shift-Enter, modifyOtherKeys"),
        ("\x1b\r", "Alt-Enter"),
        ("\n", "Ctrl-J"),
        ("\\\r", "backslash then Enter"),
    ],
)
def test_a_newline_key_puts_a_line_break_in_the_prompt_and_enter_alone_submits(
    tmp_path: Path, key: str, how: str
) -> None:
    served: list[ModelServer] = []
    with terminal(Sandbox(tmp_path), [[("text", "Two lines read.")]], server=served) as screen:
        screen.child.send("first line")
        screen.child.send(key)
        screen.child.send("second line\r")
        screen.expect(r"Two lines read\.")
        _bye(screen)
        assert _prompts(served[0]) == ["first line\nsecond line"], how


# --- item 9: a Tab while completions load ---------------------------------------------------

_SLOW_COMPLETE = """
import json, os, sys, time
data = None
def send(m):
    sys.stdout.write(json.dumps(dict(m, jsonrpc="2.0")) + "\\n"); sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    method, params = m.get("method"), m.get("params") or {}
    if "id" not in m:
        continue
    if method == "initialize":
        data = params["env"]["dataDir"]
        os.makedirs(data, exist_ok=True)
        send({"id": m["id"], "result": {"protocol": 5, "name": "slowdone", "version": "0.1.0",
              "commands": [{"name": "pick", "hint": "pick a file", "args": {"kind": "free"}}]}})
    elif method == "command/complete":
        # Answers only once the test has seen the Tab kept (bounded: never past 8 s).
        open(os.path.join(data, "asked"), "a").close()
        release = os.path.join(data, "release")
        end = time.monotonic() + 8
        while not os.path.exists(release) and time.monotonic() < end:
            time.sleep(0.01)
        send({"id": m["id"], "result": {"completions": [{"value": "notes.txt"}]}})
    elif method == "command/run":
        send({"id": m["id"], "result": {"outcome": {"kind": "text", "text": "picked " + params.get("args", "")}}})
    else:
        send({"id": m["id"], "error": {"code": -32601, "message": "no " + str(method)}})
"""


def test_a_tab_pressed_while_a_plugins_completions_load_completes_when_they_arrive(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    plugin = box.bingo_home / "plugins" / "slowdone"
    plugin.mkdir(parents=True)
    (plugin / "main.py").write_text(_SLOW_COMPLETE, encoding="utf-8")
    (plugin / "plugin.json").write_text(
        json.dumps(
            {
                "name": "slowdone",
                "version": "0.1.0",
                "entry": {"command": sys.executable, "args": ["${PLUGIN_ROOT}/main.py"]},
            }
        ),
        encoding="utf-8",
    )
    box.settings({"deadlines": {"command/complete": 9}})
    data = box.bingo_home / "data" / "plugins" / "slowdone"
    with terminal(box) as screen:
        screen.child.send("/pick n")
        # The completion is being asked for; a Tab now meets an empty list.
        _wait_for(data / "asked", screen)
        screen.child.send("\t")
        screen.expect(r"completing… \(your Tab applies when they arrive\)")
        (data / "release").touch()
        screen.expect(r"notes\.txt")
        screen.child.send("\r")
        screen.expect(r"> /pick notes\.txt\n")  # the Tab inserted it: Enter ran what it made
        screen.expect(r"picked notes\.txt")
        _bye(screen)


def _wait_for(path: Path, screen: Screen) -> None:
    """Wait (bounded) until `path` exists, reading the screen meanwhile."""
    import time

    end = time.monotonic() + WAIT
    while not path.exists():
        assert time.monotonic() < end, f"{path} never appeared; the screen ends with {screen.text()[-600:]!r}"
        try:
            screen.read(0.05)
        except Exception:
            pass


# --- items 10 and 2: one way to answer; a "no" with words for the model ---------------------


def test_t_at_a_permission_declines_with_words_the_model_receives(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"sandbox": {"mode": "off"}})  # without a sandbox, bash is asked about
    served: list[ModelServer] = []
    replies: list[Reply] = [[("tool", "t1", "bash", {"command": "rm -rf build"})], [("text", "Understood.")]]
    with terminal(box, replies, server=served) as screen:
        screen.child.send("clean up\r")
        screen.expect(
            r"\[y\] yes, once +\[a\] yes, always: bash\(rm -rf build\) +\[n\] no \(Esc\) +\[t\] no, and tell the model why"
        )
        screen.child.send("t")
        screen.expect(r"why>")
        screen.child.send("keep the build \u202edir\r")
        screen.expect(r"declined bash: keep the build <U\+202E>dir")  # escaped as shown
        screen.expect(r"Understood\.")
        _bye(screen)
        results = _tool_results(served[0].bodies[1])
    assert [r.get("is_error") for r in results] == [True]
    assert _result_text(results[0]) == "the person declined to run bash, and said: keep the build \u202edir"


def test_a_hooks_yes_no_question_takes_single_keys_and_esc_is_no(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    install_declaring(box, "zguard")
    hook = {"name": "guard", "site": "command", "points": ["before"]}
    box.settings(
        {
            "plugins": {
                "zguard": {
                    "hooks": [hook],
                    "commands": ["deploy"],
                    "answers": {"guard": {"outcome": "ask", "value": "deploys go to \x1b[2Jproduction"}},
                }
            }
        }
    )
    with terminal(box) as screen:
        screen.child.send("/deploy now\r")
        # The hook's reason, under its name, escaped, set off as foreign text.
        screen.expect(
            r"\? hook guard \(zguard\) asks: run /deploy now\?\n +│ deploys go to \\x1b\[2Jproduction\n +\[y\] yes +\[n\] no \(Esc\)"
        )
        screen.child.send("x")  # a key no answer takes answers nothing
        screen.child.send("y")
        screen.expect(r"zguard's own /deploy")
        screen.prompt()
        screen.child.send("/deploy again\r")
        screen.expect(r"asks: run /deploy again\?")
        screen.child.send("\x1b")
        screen.expect(r"/deploy was refused: the person said no")
        _bye(screen)
    assert "\x1b[2J" not in screen.raw


def test_a_plugins_yes_no_question_takes_the_same_keys_and_its_answer_reaches_the_plugin(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "asker-node")
    box.settings({"permissions": {"allow": ["plugin__asker-node__*"]}})
    served: list[ModelServer] = []
    replies: list[Reply] = [
        [("tool", "t1", "plugin__asker-node__confirm", {})],
        [("tool", "t2", "plugin__asker-node__confirm", {})],
        [("text", "Both asked.")],
    ]
    with terminal(box, replies, server=served) as screen:
        screen.child.send("go\r")
        screen.expect(r"\? plugin \"asker-node\" asks: proceed\?\n +\[y\] yes +\[n\] no \(Esc\)")
        screen.child.send("\x1b")
        screen.expect(r"→ no")
        screen.expect(r"\[y\] yes +\[n\] no \(Esc\)")
        screen.child.send("y")
        screen.expect(r"Both asked\.")
        _bye(screen)
    said = [_result_text(_tool_results(body)[-1]) for body in served[0].bodies[1:]]
    assert said == ["the person answered: no", "the person answered: yes"]


def test_a_tool_hooks_ask_shows_the_hook_and_its_reason_with_the_gates_question(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    install_declaring(box, "zguard")
    hook = {"name": "guard", "site": "tool", "points": ["before"]}
    box.install(EXAMPLES / "wordcount")
    (box.project / "notes.txt").write_text("a b c\n", encoding="utf-8")
    box.settings(
        {
            "permissions": {"allow": ["plugin__wordcount__count"]},
            "plugins": {
                "zguard": {"hooks": [hook], "answers": {"guard": {"outcome": "ask", "value": "counting is audited"}}}
            },
        }
    )
    served: list[ModelServer] = []
    replies: list[Reply] = [[("tool", "t1", "plugin__wordcount__count", {"path": "notes.txt"})], [("text", "Counted.")]]
    with terminal(box, replies, server=served) as screen:
        screen.child.send("count\r")
        screen.expect(
            r"bingo wants to run plugin__wordcount__count · hook guard \(zguard\) asks to confirm it\n +│ counting is audited\n"
        )
        screen.child.send("y")
        screen.expect(r"Counted\.")
        _bye(screen)
    assert [r.get("is_error") for r in _tool_results(served[0].bodies[1])] == [None]


def test_a_prompt_a_submit_hook_refused_is_put_back_in_the_input_with_the_reason(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    install_declaring(box, "zguard")
    hook = {"name": "guard", "site": "prompt", "points": ["submit"]}
    box.settings(
        {
            "plugins": {
                "zguard": {
                    "hooks": [hook],
                    "answers": {"guard": {"outcome": "deny", "value": "no passwords in prompts"}},
                }
            }
        }
    )
    served: list[ModelServer] = []
    with terminal(box, [], server=served) as screen:
        screen.child.send("my password is hunter2\r")
        screen.expect(r"bingo: no passwords in prompts\n")
        screen.expect(r"your prompt was not sent: it is back in the input to edit")
        screen.prompt()
        screen.child.send("!\r")  # typed after the text put back: Enter sends the whole
        screen.expect(r"> my password is hunter2!\n")
        screen.expect(r"back in the input to edit")
        screen.prompt()
        screen.child.sendcontrol("c")  # clears the line it is back in
        # /exit, not Ctrl-D: while the prompt is drawn again after Ctrl-C the terminal may be in
        # cooked mode, whose line discipline eats a Ctrl-D (failed once so in a fresh-clone run);
        # typed text waits there for bingo. Were the line not cleared, "/exit" would be appended
        # to the refused prompt and bingo would not exit.
        screen.prompt()
        screen.child.send("/exit\r")
        assert screen.exits() == 0
    assert served[0].bodies == []  # nothing reached the model


# --- item 9: /model, and what Ctrl-D leaves ------------------------------------------------


def test_slash_model_switches_the_model_every_later_request_names(tmp_path: Path) -> None:
    served: list[ModelServer] = []
    with terminal(Sandbox(tmp_path), [[("text", "One.")], [("text", "Two.")]], server=served) as screen:
        screen.child.send("/model\r")
        screen.expect(
            r"the model is claude-sonnet-4-5 \(via anthropic\); anthropic lists: claude-sonnet-4-5; /model NAME switches to another"
        )
        screen.prompt()
        screen.child.send("/model claude-other-1\r")
        screen.expect(r"the model is now claude-other-1 \(via anthropic\) until bingo exits \(not one anthropic lists")
        screen.prompt()
        screen.child.send("first\r")
        screen.expect(r"One\.")
        screen.prompt()
        screen.child.send("second\r")
        screen.expect(r"Two\.")
        screen.prompt()
        screen.child.send("/model\r")
        screen.expect(r"the model is claude-other-1 \(via anthropic\)")
        _bye(screen)
        assert [body["model"] for body in served[0].bodies] == ["claude-other-1", "claude-other-1"]


def test_ctrl_d_leaves_one_line_saying_how_to_continue_the_session(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    with terminal(box, [[("text", "Noted.")]]) as screen:
        screen.child.send("remember kumquat\r")
        screen.expect(r"Noted\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        said = screen.expect(r"bingo --resume (\S+) continues this session \(bingo -c: the latest\) *\n").group(1)
        assert screen.exits() == 0
    listed = box.run("-p", "/sessions")
    assert said in listed.stdout


# --- item 11: after Ctrl-C, one line --------------------------------------------------------


def test_ctrl_c_during_a_turn_leaves_one_line(tmp_path: Path) -> None:
    import threading

    released = threading.Event()
    with terminal(Sandbox(tmp_path), [[("text", "Thinking"), ("pause", released), ("text", " more.")]]) as screen:
        screen.child.send("go\r")
        before = screen.expect("Thinking").start()  # what the screen shows from here on
        screen.child.sendcontrol("c")
        screen.expect(r"the turn was interrupted")
        released.set()
        _bye(screen)
        after = screen.text()[before:]
    assert re.findall(r"interrupted", after) == ["interrupted"], after
