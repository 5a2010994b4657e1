"""`bingo --channel matrix` against a real homeserver (Synapse, tests/e2e/_synapse.py): the
real `bingo` subprocess as the bot, a person and a stranger as Matrix users, the scripted
model behind it. What the person reads is read back from the room itself."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e._bingo import BINGO, EXAMPLES, Sandbox, no_traceback
from tests.e2e._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model
from tests.e2e._synapse import Synapse, User, homeserver, wait_for

__all__ = ["homeserver"]  # the session's one Synapse, a fixture

TOKEN_ENV = "BINGO_MATRIX_TOKEN"
TABLE_HTML = (
    "<p><strong>notes.txt</strong></p><table><thead><tr><th>what</th><th>count</th></tr></thead>"
    "<tbody><tr><td>words</td><td>9</td></tr><tr><td>lines</td><td>3</td></tr><tr><td>characters</td><td>44</td></tr></tbody></table>"
)
TABLE_TEXT = "notes.txt\nwhat        count\n----------  -----\nwords           9\nlines           3\ncharacters     44"


class Room:
    """A room with the bot, a person it listens to and a stranger it does not."""

    def __init__(self, server: Synapse) -> None:
        self.server = server
        self.bot = server.register("bot")
        self.person = server.register("person")
        self.stranger = server.register("stranger")
        self.id = self.person.create_room(self.bot, self.stranger)
        self.stranger.join(self.id)

    def said_by_bot(self) -> list[dict[str, Any]]:
        """The contents of every message the bot sent here, oldest first."""
        return [e["content"] for e in self.person.messages(self.id) if e["sender"] == self.bot.id]

    def bodies(self) -> list[str]:
        return [c.get("body", "") for c in self.said_by_bot()]

    def wait_for_body(self, predicate: Any, what: str, timeout: float = 30.0) -> list[str]:
        return wait_for(lambda: (b := self.bodies()) and predicate(b) and b, what=what, timeout=timeout)


def _box(tmp_path: Path, room: Room, replies: list[list[dict[str, Any]]], **settings: Any) -> Sandbox:
    box = Sandbox(tmp_path, env={})
    box.install(EXAMPLES / "wordcount")
    (box.project / "notes.txt").write_text("the quick brown fox\njumps over\nthe lazy dog\n", encoding="utf-8")
    matrix = {"homeserver": room.server.url, "userId": room.bot.id, "accessTokenEnv": TOKEN_ENV, "rooms": [room.id], "allowedUsers": [room.person.id], "cwd": str(box.project)}
    matrix.update(settings.pop("matrix", {}))
    use_scripted_model(box, replies, channels={"matrix": matrix}, **settings)
    return box


class Bot:
    """The real `bingo --channel matrix`, started in the background and stopped with SIGTERM."""

    def __init__(self, box: Sandbox, token: str) -> None:
        self.box = box
        self.process = subprocess.Popen(
            [BINGO, "--channel", "matrix"],
            cwd=box.root,
            env={**box.env, TOKEN_ENV: token},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stderr = ""

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        out, err = self.process.communicate(timeout=30)
        self.stderr += err
        return self.process.returncode

    def log(self) -> str:
        path = self.box.logs / "bingo.log"
        return path.read_text(encoding="utf-8") if path.exists() else ""

    def listening(self) -> None:
        wait_for(lambda: "serving" in self.log() or self.process.poll() is not None, what="bingo to listen")
        assert self.process.poll() is None, self.process.communicate(timeout=5)


@pytest.fixture
def room(homeserver: Synapse) -> Room:
    return Room(homeserver)


@pytest.fixture
def bots() -> Iterator[list[Bot]]:
    """Every bot a test starts, stopped when it ends (whatever it asserted)."""
    started: list[Bot] = []
    yield started
    for bot in started:
        if bot.process.poll() is None:
            bot.process.kill()
            bot.process.communicate(timeout=10)


def _start(bots: list[Bot], box: Sandbox, room: Room) -> Bot:
    bot = Bot(box, room.bot.token)
    bots.append(bot)
    bot.listening()
    return bot


def test_a_prompt_and_a_command_are_answered_and_a_stranger_is_not(tmp_path: Path, room: Room, bots: list[Bot]) -> None:
    box = _box(tmp_path, room, [[text("Hello from the model.")]])
    bot = _start(bots, box, room)
    room.stranger.say(room.id, "hello, bot: run this for me")
    room.person.say(room.id, "hi")
    room.wait_for_body(lambda b: "Hello from the model." in b, "the model's answer")
    room.person.say(room.id, "/wordcount notes.txt")
    room.wait_for_body(lambda b: TABLE_TEXT in b, "the wordcount table")
    assert bot.stop() == 0
    said = room.said_by_bot()
    [table] = [c for c in said if c.get("body") == TABLE_TEXT]
    assert table["msgtype"] == "m.text"
    assert table["format"] == "org.matrix.custom.html"
    assert table["formatted_body"] == TABLE_HTML
    [answer] = [c for c in said if c.get("body") == "Hello from the model."]
    assert answer["msgtype"] == "m.text"
    # The stranger was heard by nobody: one line in the log, no turn, no reply.
    assert f"ignored a message from {room.stranger.id}" in bot.log()
    assert len(model_requests(box)) == 1
    assert [m["content"] for m in model_requests(box)[0]["request"]["messages"][-1:]][0][0]["text"] == "hi"
    assert room.bot.token not in bot.log() + bot.stderr
    assert no_traceback(subprocess.CompletedProcess([], 0, "", bot.stderr))
