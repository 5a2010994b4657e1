"""A plugin's slash command that does not answer holds the terminal no longer than the
person wants: Ctrl-C says a second one stops waiting, the second does (the prompt is back
and /help runs), and Ctrl-D while such a command runs leaves at once, not at its deadline."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.e2e._bingo import Sandbox
from tests.e2e.test_terminal import terminal

_NAPPER = """
import json, sys
def send(message):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\\n")
    sys.stdout.flush()
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        send({"id": message["id"], "result": {"protocol": 5, "name": "napper", "version": "1", "commands": [
            {"name": "nap", "hint": "never answers", "args": {"kind": "none"}, "instant": False, "family": "plugin"}]}})
    elif "id" in message and message.get("method") not in (None, "command/run"):
        send({"id": message["id"], "error": {"code": -32601, "message": "no"}})
    # command/run is never answered
"""


def _napper(box: Sandbox) -> None:
    root = box.bingo_home / "plugins" / "napper"
    root.mkdir(parents=True)
    (root / "main.py").write_text(_NAPPER, encoding="utf-8")
    (root / "plugin.json").write_text(
        json.dumps(
            {"name": "napper", "version": "1", "entry": {"command": "python3", "args": ["${PLUGIN_ROOT}/main.py"]}}
        ),
        encoding="utf-8",
    )
    # Its deadline is the default 60 s: the test passes only if Ctrl-C beats it.


def test_ctrl_c_twice_stops_waiting_for_a_command_that_never_answers(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _napper(box)
    with terminal(box, model=False) as screen:
        screen.child.send("/nap\r")
        screen.expect("working")
        screen.child.sendcontrol("c")
        screen.expect("a command is running; Ctrl-C again stops waiting for it")
        # Past the line printed above the prompt: a key sent while it is written may meet the
        # terminal in cooked mode, where Ctrl-C is the line discipline's SIGINT, not bingo's key.
        screen.prompt()
        screen.child.sendcontrol("c")
        screen.expect(r"stopped waiting for the command \(a late answer is dropped\)")
        screen.prompt()
        screen.child.send("/help\r")
        screen.expect("list every command")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0


def test_ctrl_d_while_a_command_never_answers_exits_at_once(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _napper(box)
    with terminal(box, model=False) as screen:
        screen.child.send("/nap\r")
        screen.expect("working")
        started = time.monotonic()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
        assert time.monotonic() - started < 10  # the command's deadline is 60 s
