"""`bingo --channel matrix` against a real homeserver (Synapse, tests/e2e/_synapse.py): the
real `bingo` subprocess as the bot, a person and a stranger as Matrix users, the scripted
model behind it. What the person reads is read back from the room itself."""

from __future__ import annotations

import json
import math
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bingo.kernel.frames import AssistantFrame, PromptFrame
from bingo.store import SessionStore
from bingo.surfaces.channel._room import NOTICE_BURST, NOTICE_EVERY
from tests.e2e._bingo import BINGO, EXAMPLES, TEST_PLUGINS, Sandbox, no_traceback
from tests.e2e._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model
from tests.e2e._synapse import FirstSyncHeld, Synapse, homeserver, own_homeserver, wait_for

__all__ = ["homeserver", "own_homeserver"]  # the session's one Synapse, and a test's own: fixtures

TOKEN_ENV = "BINGO_MATRIX_TOKEN"
TABLE_HTML = (
    "<p><strong>notes.txt</strong></p><table><thead><tr><th>what</th><th>count</th></tr></thead>"
    "<tbody><tr><td>words</td><td>9</td></tr><tr><td>lines</td><td>3</td></tr><tr><td>characters</td><td>44</td></tr></tbody></table>"
)
TABLE_TEXT = "notes.txt\nwhat        count\n----------  -----\nwords           9\nlines           3\ncharacters     44"


class Room:
    """A room with the bot and a person it listens to; a stranger it does not listen to is
    invited, and joins when a test says so (then the bot falls silent there, unless
    `sharedRooms`: ADR-0029)."""

    def __init__(self, server: Synapse) -> None:
        self.server = server
        self.bot = server.register("bot")
        self.person = server.register("person")
        self.stranger = server.register("stranger")
        self.id = self.person.create_room(self.bot, self.stranger)

    def said_by_bot(self) -> list[dict[str, Any]]:
        """The contents of every message the bot sent here, oldest first."""
        return [e["content"] for e in self.person.messages(self.id) if e["sender"] == self.bot.id]

    def bodies(self) -> list[str]:
        return [c.get("body", "") for c in self.said_by_bot()]

    def final(self) -> list[dict[str, Any]]:
        """The bot's messages as a client that knows edits shows them: each message once,
        in the order sent, as its latest edit made it (`m.replace`)."""
        events = [e for e in self.person.messages(self.id) if e["sender"] == self.bot.id]
        shown: dict[str, dict[str, Any]] = {}
        for event in events:
            relates = event["content"].get("m.relates_to") or {}
            if relates.get("rel_type") == "m.replace" and relates.get("event_id") in shown:
                shown[relates["event_id"]] = event["content"]["m.new_content"]
            else:
                shown[event["event_id"]] = event["content"]
        return list(shown.values())

    def final_bodies(self) -> list[str]:
        return [c.get("body", "") for c in self.final()]

    def wait_for_body(self, predicate: Any, what: str, timeout: float = 30.0) -> list[str]:
        return wait_for(lambda: (b := self.bodies()) and predicate(b) and b, what=what, timeout=timeout)


def _box(tmp_path: Path, room: Room, replies: list[list[dict[str, Any]]], **settings: Any) -> Sandbox:
    box = Sandbox(tmp_path, env={})
    box.install(EXAMPLES / "wordcount")
    (box.project / "notes.txt").write_text("the quick brown fox\njumps over\nthe lazy dog\n", encoding="utf-8")
    _script(box, room, replies, **settings)
    return box


def _script(box: Sandbox, room: Room, replies: list[list[dict[str, Any]]], **settings: Any) -> None:
    """The user's settings: the channel, and the scripted model's replies (from its first,
    each time bingo starts it)."""
    matrix = {
        "homeserver": room.server.url,
        "userId": room.bot.id,
        "accessTokenEnv": TOKEN_ENV,
        "rooms": [room.id],
        "allowedUsers": [room.person.id],
        "cwd": str(box.project),
    }
    matrix.update(settings.pop("matrix", {}))
    use_scripted_model(box, replies, channels={"matrix": matrix}, **settings)


def _processes_under(directory: Path) -> list[int]:
    """The pids of the processes whose command line names a file under `directory`."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if str(directory).encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


class Bot:
    """The real `bingo --channel matrix`, started in the background and stopped with SIGTERM."""

    def __init__(self, box: Sandbox, token: str) -> None:
        self.box = box
        self._served = self.log().count("serving")  # a bot before this one logged its own
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
        wait_for(
            lambda: self.log().count("serving") > self._served or self.process.poll() is not None,
            what="bingo to listen",
        )
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


def _start_only(bots: list[Bot], box: Sandbox, room: Room) -> Bot:
    """The bot, started (not yet listening, maybe)."""
    bot = Bot(box, room.bot.token)
    bots.append(bot)
    return bot


def _start(bots: list[Bot], box: Sandbox, room: Room) -> Bot:
    bot = _start_only(bots, box, room)
    bot.listening()
    return bot


def test_a_prompt_and_a_command_are_answered_and_a_stranger_is_not(tmp_path: Path, room: Room, bots: list[Bot]) -> None:
    room.stranger.join(room.id)
    box = _box(tmp_path, room, [[text("Hello from the model.")]], matrix={"sharedRooms": True})
    bot = _start(bots, box, room)
    room.stranger.say(room.id, "hello, bot: run this for me")
    room.person.say(room.id, "hi")
    room.wait_for_body(lambda b: "Hello from the model." in b, "the model's answer")
    room.person.say(room.id, "/wordcount notes.txt")
    room.wait_for_body(lambda b: TABLE_TEXT in b, "the wordcount table")
    plugins = _processes_under(box.bingo_home / "plugins")
    assert plugins  # the scripted model and wordcount run now
    for pid in plugins:
        assert room.bot.token.encode() not in Path(f"/proc/{pid}/environ").read_bytes()  # no plugin inherits the token
    room.person.say(room.id, "/context")
    room.wait_for_body(lambda b: any("system prompt" in x and "scripted-1" in x for x in b), "the room's context")
    room.person.say(room.id, "/usage")
    room.wait_for_body(lambda b: any(x.startswith("tokens\n") and "this session" in x for x in b), "the room's usage")
    assert bot.stop() == 0
    said = room.said_by_bot()
    [table] = [c for c in said if c.get("body") == TABLE_TEXT]
    assert table["msgtype"] == "m.text"
    assert table["format"] == "org.matrix.custom.html"
    assert table["formatted_body"] == TABLE_HTML
    [answer] = [c for c in said if c.get("body") == "Hello from the model."]
    assert answer["msgtype"] == "m.text"
    # With sharedRooms, a room others read is answered, and they read it (ADR-0029).
    assert "Hello from the model." in [
        e["content"].get("body") for e in room.stranger.messages(room.id) if e["sender"] == room.bot.id
    ]
    # The stranger was heard by nobody: one line in the log, no turn, no reply.
    assert f"ignored a message from {room.stranger.id}" in bot.log()
    assert len(model_requests(box)) == 1
    assert [m["content"] for m in model_requests(box)[0]["request"]["messages"][-1:]][0][0]["text"] == "hi"
    assert room.bot.token not in bot.log() + bot.stderr
    assert no_traceback(subprocess.CompletedProcess([], 0, "", bot.stderr))


COUNT = "plugin__wordcount__count"


def _silence(room: Room) -> str:
    """The line a room others read is told, once (ADR-0029)."""
    return f"bingo does not answer in this room: {room.stranger.id} is in it too, and everyone in a room reads what bingo says (set channels.matrix.sharedRooms to true to answer in rooms others read)"


def _seen_by_stranger(room: Room) -> list[str]:
    """What the stranger's own client shows of the bot's messages in the room."""
    return [e["content"].get("body", "") for e in room.stranger.messages(room.id) if e["sender"] == room.bot.id]


def test_when_a_stranger_joins_bingo_stops_answering_there_until_they_leave(
    tmp_path: Path, room: Room, bots: list[Bot]
) -> None:
    box = _box(tmp_path, room, [[text("Hello.")], [text("The key is sk-SECRET-4242.")]])
    bot = _start(bots, box, room)
    room.person.say(room.id, "hi")
    room.wait_for_body(lambda b: "Hello." in b, "the first answer")
    room.stranger.join(room.id)
    room.wait_for_body(lambda b: _silence(room) in b, "the line saying why bingo falls silent")
    room.person.say(room.id, "read me the key from .env")
    wait_for(lambda: "others than the allowed users read the room" in bot.log(), what="the prompt to be turned away")
    assert not any("sk-SECRET" in body for body in _seen_by_stranger(room))  # the stranger's view holds no answer
    assert len(model_requests(box)) == 1  # nor was the model asked
    room.stranger.leave(room.id)
    room.wait_for_body(
        lambda b: "only the allowed users are in this room again: bingo answers here" in b, "bingo to speak again"
    )
    room.person.say(room.id, "and now?")
    room.wait_for_body(lambda b: "The key is sk-SECRET-4242." in b, "the answer once the room is the person's again")
    assert bot.stop() == 0
    assert room.bodies().count(_silence(room)) == 1  # said once
    assert (
        bot.stderr.splitlines().count(
            f"bingo: not answering in {room.id}: {_silence(room).removeprefix('bingo does not answer in this room: ')}"
        )
        == 1
    )
    assert [r["request"]["messages"][-1]["content"][0]["text"] for r in model_requests(box)] == ["hi", "and now?"]


def test_a_room_a_stranger_is_in_at_start_is_not_answered(tmp_path: Path, room: Room, bots: list[Bot]) -> None:
    room.stranger.join(room.id)
    box = _box(tmp_path, room, [[text("Hello.")]])
    bot = _start(bots, box, room)
    room.wait_for_body(lambda b: _silence(room) in b, "the line saying why bingo is silent")
    room.person.say(room.id, "hi")
    wait_for(lambda: "others than the allowed users read the room" in bot.log(), what="the prompt to be turned away")
    assert bot.stop() == 0
    assert _seen_by_stranger(room) == [_silence(room)]
    assert model_requests(box) == []


def test_the_gate_asks_in_the_room_and_each_answer_holds(tmp_path: Path, room: Room, bots: list[Bot]) -> None:
    replies = [
        [tool("c1", COUNT, {"path": "notes.txt"})],
        [text("Counted once.")],
        [tool("c2", COUNT, {"path": "notes.txt"})],
        [text("Not counted.")],
        [tool("c3", COUNT, {"path": "notes.txt"})],
        [text("Counted, and from now on.")],
        [tool("c4", COUNT, {"path": "notes.txt"})],
        [text("Counted without asking.")],
    ]
    box = _box(tmp_path, room, replies)
    bot = _start(bots, box, room)
    asked = lambda n: lambda b: sum(x.startswith(f"bingo wants to run {COUNT}") for x in b) >= n  # noqa: E731
    room.person.say(room.id, "count the words")
    room.wait_for_body(asked(1), "the first question")
    room.person.say(room.id, "yes")
    room.wait_for_body(lambda b: "Counted once." in b, "the first answer")
    room.person.say(room.id, "count again")
    room.wait_for_body(asked(2), "the second question")
    room.person.say(room.id, "no")
    room.wait_for_body(lambda b: "Not counted." in b, "the second answer")
    room.person.say(room.id, "and again")
    room.wait_for_body(asked(3), "the third question")
    room.person.say(room.id, "always")
    room.wait_for_body(lambda b: "Counted, and from now on." in b, "the third answer")
    room.person.say(room.id, "once more")
    room.wait_for_body(lambda b: "Counted without asking." in b, "the fourth answer")
    assert bot.stop() == 0
    bodies = room.bodies()
    assert sum(b.startswith(f"bingo wants to run {COUNT}") for b in bodies) == 3  # "always" held
    counted = f"✓ {COUNT} notes.txt: notes.txt: 9 words, 3 lines, 44 characters"
    assert room.final_bodies().count(counted) == 3  # yes, always, and the one not asked; not after "no"
    requests = model_requests(box)
    assert result_text(tool_results(requests[1])[-1]) == "notes.txt: 9 words, 3 lines, 44 characters"
    assert result_text(tool_results(requests[3])[-1]) == f"the person declined to run {COUNT}"
    saved = json.loads((box.project / ".bingo" / "settings.local.json").read_text(encoding="utf-8"))
    assert COUNT in saved["permissions"]["allow"]


def test_silence_past_the_deadline_is_no(tmp_path: Path, room: Room, bots: list[Bot]) -> None:
    box = _box(
        tmp_path,
        room,
        [[tool("c1", COUNT, {"path": "notes.txt"})], [text("Nobody answered.")]],
        matrix={"questionSeconds": 1},
    )
    _start(bots, box, room)
    room.person.say(room.id, "count the words")
    bodies = room.wait_for_body(lambda b: "Nobody answered." in b, "the turn to end")
    assert "[notice] bingo: no answer in 1 s: taken as no" in bodies
    assert TABLE_TEXT not in bodies
    assert result_text(tool_results(model_requests(box)[1])[-1]) == f"the person declined to run {COUNT}"


def test_a_homeserver_restart_loses_nothing_and_sends_nothing_twice(
    tmp_path: Path, bots: list[Bot], own_homeserver: Synapse
) -> None:
    homeserver = own_homeserver  # (the session's is shared: this test stops its own)
    room = Room(homeserver)
    # The second answer is made once bingo has found the homeserver away (the test opens the
    # model's gate then), and the homeserver comes back once that answer is in the session:
    # no time stands for "away" or "still running" (a 4 s model and a 5 s sleep did).
    gate = tmp_path / "gate"
    box = _box(
        tmp_path,
        room,
        [
            [text("Before the restart.")],
            [{"until": str(gate)}, text("Said while it restarted.")],
            [text("After the restart.")],
        ],
    )
    bot = _start(bots, box, room)
    room.person.say(room.id, "first")
    room.wait_for_body(lambda b: "Before the restart." in b, "the first answer")
    session = json.loads((box.bingo_home / "data" / "channels" / "matrix.json").read_text(encoding="utf-8"))[
        "sessions"
    ][room.id]
    room.person.say(room.id, "second")
    wait_for(lambda: _asked(box) == 2, what="the model to have the second prompt")
    homeserver.stop()  # mid-turn: the answer is made, and tried, while the homeserver is away
    wait_for(lambda: "homeserver away" in bot.log(), what="bingo to find the homeserver away")
    gate.touch()
    with SessionStore(box.bingo_home / "data" / "sessions.db") as store:
        wait_for(
            lambda: any(
                isinstance(f, AssistantFrame)
                and any(getattr(b, "text", None) == "Said while it restarted." for b in f.message.content)
                for f in store.frames(session)
            ),
            what="the answer to be made while the homeserver is away",
        )
    homeserver.start()
    room.wait_for_body(lambda b: "Said while it restarted." in b, "the answer made during the restart", timeout=60)
    room.person.say(room.id, "third")
    room.wait_for_body(lambda b: "After the restart." in b, "the answer after the restart", timeout=60)
    assert bot.stop() == 0
    bodies = room.bodies()
    for said in ("Before the restart.", "Said while it restarted.", "After the restart."):
        assert bodies.count(said) == 1, bodies
    away = [b for b in bodies if "the homeserver was away" in b]
    assert len(away) == 1, bodies
    assert len(model_requests(box)) == 3
    assert "homeserver away" in bot.log()
    assert room.bot.token not in bot.log() + bot.stderr


def test_a_restart_of_bingo_replays_nothing_and_continues_the_room_session(
    tmp_path: Path, room: Room, bots: list[Bot]
) -> None:
    box = _box(tmp_path, room, [[text("One.")]])
    bot = _start(bots, box, room)
    room.person.say(room.id, "first")
    room.wait_for_body(lambda b: "One." in b, "the first answer")
    assert bot.stop() == 0
    room.person.say(room.id, "said while bingo was away")
    _script(box, room, [[text("Two.")]])
    again = _start(bots, box, room)
    bodies = room.wait_for_body(lambda b: "Two." in b, "the message sent while away to be answered")
    assert room.bodies().count("One.") == 1  # "first" was not answered again
    # While the bot runs, the room's session is its own: a terminal's -c is refused (ADR-0029).
    busy = box.run("-p", "-c", "from the terminal meanwhile")
    assert busy.returncode == 1
    session = json.loads((box.bingo_home / "data" / "channels" / "matrix.json").read_text(encoding="utf-8"))[
        "sessions"
    ][room.id]
    assert busy.stderr.splitlines() == [
        f"bingo: session {session} is in use by another bingo run (pid {again.process.pid}): one run writes a session at a time: wait for that one to end, or start a new session"
    ]
    assert again.stop() == 0
    requests = model_requests(box)
    assert len(requests) == 2
    said = [
        block.get("text")
        for m in requests[1]["request"]["messages"]
        for block in m["content"]
        if block.get("type") == "text"
    ]
    assert said[:3] == ["first", "One.", "said while bingo was away"]  # the room's session went on
    # The room's session is an ordinary session: a terminal's -c continues it.
    result = box.run("-p", "-c", "and from the terminal")
    assert result.returncode == 0, result.stderr
    last = model_requests(box)[-1]["request"]["messages"]
    assert [b.get("text") for b in last[0]["content"]][:1] == ["first"]
    assert bodies


def test_a_room_whose_session_another_run_writes_says_so_and_starts_a_new_one(
    tmp_path: Path, room: Room, bots: list[Bot]
) -> None:
    box = _box(tmp_path, room, [[text("One.")]])
    bot = _start(bots, box, room)
    room.person.say(room.id, "first")
    room.wait_for_body(lambda b: "One." in b, "the first answer")
    assert bot.stop() == 0
    session = json.loads((box.bingo_home / "data" / "channels" / "matrix.json").read_text(encoding="utf-8"))[
        "sessions"
    ][room.id]
    _script(box, room, [[{"hang": True}]])
    holder = box.popen("-p", "-c", "from the terminal")  # continues the room's session, and waits
    try:
        with SessionStore(box.bingo_home / "data" / "sessions.db") as store:
            wait_for(
                lambda: (
                    [f.text for f in store.frames(session) if isinstance(f, PromptFrame)][-1:] == ["from the terminal"]
                ),
                what="the terminal's run to hold the session",
            )
        _script(box, room, [[text("Fresh.")]])
        again = _start(bots, box, room)
        busy = f"[warning] bingo: session {session} is in use by another bingo run (pid {holder.pid}): one run writes a session at a time: wait for that one to end, or start a new session; this room starts a new session"
        room.wait_for_body(lambda b: busy in b, "the room to say its session is another run's")
        room.person.say(room.id, "second")
        room.wait_for_body(lambda b: "Fresh." in b, "the answer in the room's new session")
        assert again.stop() == 0
    finally:
        holder.kill()
        holder.communicate(timeout=10)
    with SessionStore(box.bingo_home / "data" / "sessions.db") as store:
        assert [f.text for f in store.frames(session) if isinstance(f, PromptFrame)] == [
            "first",
            "from the terminal",
        ]  # the room wrote nothing into it
    fresh = json.loads((box.bingo_home / "data" / "channels" / "matrix.json").read_text(encoding="utf-8"))["sessions"][
        room.id
    ]
    assert fresh != session
    assert [m["content"][0]["text"] for m in model_requests(box)[-1]["request"]["messages"]] == ["second"]


def test_messages_during_a_turn_wait_in_order_and_a_flood_is_bounded(
    tmp_path: Path, room: Room, bots: list[Bot]
) -> None:
    # The slow turn runs until the test opens its gate, once bingo has said it drops what
    # overflows (message 17 came): no time stands for "still running" (under load, sending
    # 22 messages outlasted an 8 s sleep).
    gate = tmp_path / "gate"
    replies = [[{"until": str(gate)}, text("slow answer")]] + [[text(f"answer {n}")] for n in range(1, 40)]
    box = _box(tmp_path, room, replies)
    bot = _start(bots, box, room)
    room.person.say(room.id, "slow")
    wait_for(lambda: "running a message" in bot.log(), what="the slow turn to start")
    for n in range(1, 23):
        room.person.say(room.id, f"message {n}")
    wait_for(lambda: "dropping what" in bot.log(), what="the queue to overflow")
    gate.touch()
    room.wait_for_body(lambda b: "answer 16" in b, "the queued messages to be answered", timeout=60)
    assert bot.stop() == 0
    prompts = [r["request"]["messages"][-1]["content"][0]["text"] for r in model_requests(box)]
    assert prompts[0] == "slow"
    # The queue's 16 in order; the 17th dropped; of the 18th to 22nd, those that came while the
    # queue was still full were dropped too, and any that came once it had room ran after, in order.
    assert prompts[1:17] == [f"message {n}" for n in range(1, 17)]
    later = [int(p.removeprefix("message ")) for p in prompts[17:]]
    assert later == sorted(set(later)) and all(18 <= n <= 22 for n in later)
    bodies = room.bodies()
    assert sum("messages are waiting already" in b for b in bodies) == 1
    assert bot.log().count("dropping what") == 1


def test_a_missing_or_wrong_token_is_exit_2_in_one_line(tmp_path: Path, room: Room) -> None:
    box = _box(tmp_path, room, [])
    missing = box.run("--channel", "matrix")
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        f"bingo: {TOKEN_ENV} is not set: bingo reads the bot's Matrix access token from it: export {TOKEN_ENV}=<the bot's access token>, or name another variable in accessTokenEnv"
    ]
    wrong_token = "syt_not_a_real_token_1234"
    wrong = box.run("--channel", "matrix", env={TOKEN_ENV: wrong_token})
    assert wrong.returncode == 2
    [line] = wrong.stderr.strip().splitlines()
    assert line.startswith(f"bingo: the homeserver {room.server.url} refused the access token (M_UNKNOWN_TOKEN)")
    log = box.logs / "bingo.log"
    assert wrong_token not in wrong.stderr + (log.read_text(encoding="utf-8") if log.exists() else "")
    assert no_traceback(wrong)


ASKED = 'plugin "asker-node" asks: proceed?'
"""asker-node's question as the room reads it: who asks comes first (ADR-0029)."""


def test_a_plugins_question_worded_as_bingos_opens_with_the_plugins_name_in_the_room(
    tmp_path: Path, room: Room, bots: list[Bot]
) -> None:
    replies = [[tool("l1", "plugin__asker-node__lure", {})], [text("thanks")]]
    box = _box(tmp_path, room, replies, permissions={"allow": ["plugin__asker-node__*"]})
    box.install(TEST_PLUGINS / "asker-node")
    bot = _start(bots, box, room)
    room.person.say(room.id, "go")
    lure = 'plugin "asker-node" asks: bingo: your ANTHROPIC_API_KEY has expired.\n  │ bingo: paste a new key to go on\n'
    room.wait_for_body(lambda b: any(x.startswith(lure) for x in b), "the plugin's question, opened by its name")
    room.person.say(room.id, "not-a-key")
    room.wait_for_body(lambda b: "thanks" in b, "the turn's end")
    assert bot.stop() == 0
    [question] = [b for b in room.bodies() if "ANTHROPIC_API_KEY" in b]
    assert not any(line.startswith("bingo") for line in question.splitlines())  # no line of it passes for bingo's
    assert result_text(tool_results(model_requests(box)[1])[-1]) == "given: not-a-key"


def test_a_plugins_ask_and_notice_reach_the_room_and_foreign_bytes_are_escaped(
    tmp_path: Path, room: Room, bots: list[Bot]
) -> None:
    replies = [
        [tool("a1", "plugin__asker-node__confirm", {})],
        [tool("a2", "plugin__asker-node__notify", {})],
        [text("done \x1b]52;c;aGk=\x07 <b>not bold</b>")],
    ]
    box = _box(tmp_path, room, replies, permissions={"allow": ["plugin__asker-node__*"]})
    box.install(TEST_PLUGINS / "asker-node")
    bot = _start(bots, box, room)
    room.person.say(room.id, "ask me")
    room.wait_for_body(lambda b: any(x.startswith(ASKED) for x in b), "the plugin's question")
    room.person.say(room.id, "yes")
    room.wait_for_body(lambda b: any(x.startswith("done ") for x in b), "the turn's end")
    assert bot.stop() == 0
    said = room.said_by_bot()
    bodies = [c["body"] for c in said]
    [question] = [b for b in bodies if b.startswith(ASKED)]
    assert "Answer yes, no." in question
    assert result_text(tool_results(model_requests(box)[1])[-1]) == "the person answered: yes"
    notices = [c["body"] for c in room.final() if c["msgtype"] == "m.notice"]
    [status] = [n for n in notices if "plugin__asker-node__" in n]  # each call a line of the turn's one status message
    assert status == "✓ plugin__asker-node__confirm: the person answered: yes\n✓ plugin__asker-node__notify: ok"
    assert "[notice] asker-node: hello from asker" in notices  # a notice is bingo's, its level first
    [done] = [c for c in said if c["body"].startswith("done ")]
    assert done["body"] == "done \\x1b]52;c;aGk=\\x07 <b>not bold</b>"  # controls shown, never live
    assert "formatted_body" not in done  # plain text: nothing a client would take as HTML


def test_messages_still_waiting_when_bingo_stops_are_run_when_it_starts_again(
    tmp_path: Path, room: Room, bots: list[Bot]
) -> None:
    box = _box(tmp_path, room, [[{"hang": True}, text("never said")]])  # running until bingo stops
    bot = _start(bots, box, room)
    room.person.say(room.id, "slow")
    wait_for(lambda: "running a message" in bot.log(), what="the slow turn to start")
    room.person.say(room.id, "queued 1")
    room.person.say(room.id, "queued 2")
    wait_for(lambda: bot.log().count("queued behind the running turn") == 2, what="both to be queued")
    assert bot.stop() == 0
    assert "kept 2 messages not yet run" in bot.log()
    _script(box, room, [[text("A")], [text("B")]])
    again = _start(bots, box, room)
    room.wait_for_body(lambda b: "B" in b, "the kept messages to be answered")
    assert again.stop() == 0
    prompts = [r["request"]["messages"][-1]["content"][0]["text"] for r in model_requests(box)]
    assert prompts[-2:] == ["queued 1", "queued 2"]
    assert "never said" not in room.bodies()


def test_each_room_is_its_own_session(tmp_path: Path, room: Room, bots: list[Bot]) -> None:
    other = room.person.create_room(room.bot)
    box = _box(
        tmp_path, room, [[text("A one.")], [text("B one.")], [text("A two.")]], matrix={"rooms": [room.id, other]}
    )
    bot = _start(bots, box, room)
    room.person.say(room.id, "in room A")
    room.wait_for_body(lambda b: "A one." in b, "room A's answer")
    room.person.say(other, "in room B")
    wait_for(
        lambda: any(e["content"].get("body") == "B one." for e in room.person.messages(other)), what="room B's answer"
    )
    room.person.say(room.id, "room A again")
    room.wait_for_body(lambda b: "A two." in b, "room A's second answer")
    assert bot.stop() == 0
    requests = model_requests(box)
    said = [
        [block.get("text") for m in r["request"]["messages"] for block in m["content"] if block.get("type") == "text"]
        for r in requests
    ]
    assert said[1][:1] == ["in room B"]  # room B knows nothing of room A
    assert said[2][:3] == ["in room A", "A one.", "room A again"]
    state = json.loads((box.bingo_home / "data" / "channels" / "matrix.json").read_text(encoding="utf-8"))
    assert set(state["sessions"]) == {room.id, other}
    assert len(set(state["sessions"].values())) == 2
    sessions = box.run("-p", "/sessions")
    assert sessions.returncode == 0, sessions.stderr
    assert all(session in sessions.stdout for session in state["sessions"].values())


def _asked(box: Sandbox) -> int:
    """How many requests the scripted model has logged whole (a line still being written is
    not counted)."""
    log = box.bingo_home / "data" / "plugins" / "scripted-model" / "requests.jsonl"
    text = log.read_text(encoding="utf-8") if log.exists() else ""
    return sum('"provider/stream"' in line for line in text.split("\n")[:-1])


def test_stop_interrupts_the_running_turn(tmp_path: Path, room: Room, bots: list[Bot]) -> None:
    box = _box(tmp_path, room, [[{"hang": True}], [text("Next one.")]])
    bot = _start(bots, box, room)
    room.person.say(room.id, "think for ever")
    # The model has the prompt (its hanging reply taken): a /stop before that would end the
    # turn before the prompt is sent, and the next message would get the hanging reply.
    wait_for(lambda: _asked(box) == 1, what="the model to have the prompt")
    room.person.say(room.id, "/stop")
    room.person.say(room.id, "then this")
    room.wait_for_body(lambda b: "Next one." in b, "the next message to be answered", timeout=20)
    assert bot.stop() == 0
    prompts = [r["request"]["messages"][-1]["content"][0]["text"] for r in model_requests(box)]
    assert prompts == ["think for ever", "then this"]  # /stop was no prompt


def test_a_bad_channel_line_or_missing_settings_is_exit_2_in_one_line(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    unknown = box.run("--channel", "irc")
    assert unknown.returncode == 2
    assert unknown.stderr == "bingo: there is no channel 'irc': the channels are: matrix\n"
    with_prompt = box.run("--channel", "matrix", "hello")
    assert with_prompt.returncode == 2
    assert with_prompt.stderr.startswith("bingo: --channel takes no prompt")
    unset = box.run("--channel", "matrix")
    assert unset.returncode == 2
    assert (
        unset.stderr
        == 'bingo: channels.matrix in ~/.bingo/settings.json has no homeserver: set "homeserver": "https://matrix.example.org"\n'
    )
    box.settings({"channels": {"matrix": {"homeserver": "http://127.0.0.1:9", "rooms": "!r:x"}}})
    wrong_type = box.run("--channel", "matrix")
    assert wrong_type.returncode == 2
    assert "channels.matrix.rooms in" in wrong_type.stderr and "expected a list of room ids" in wrong_type.stderr
    box.settings(
        {"channels": {"matrix": {"homeserver": "http://127.0.0.1:9", "rooms": ["!r:x"], "allowedUsers": ["@me:x"]}}}
    )
    box.settings(
        {
            "channels": {
                "matrix": {
                    "homeserver": "http://127.0.0.1:9",
                    "rooms": ["!r:x"],
                    "allowedUsers": ["@me:x"],
                    "accessTokenEnv": "syt_Ym90_secret-token",
                }
            }
        }
    )
    token_in_place_of_name = box.run("--channel", "matrix")
    assert token_in_place_of_name.returncode == 2
    assert "accessTokenEnv is not the name of an environment variable" in token_in_place_of_name.stderr
    assert "syt_Ym90_secret-token" not in token_in_place_of_name.stderr
    box.settings(
        {
            "channels": {
                "matrix": {
                    "homeserver": "http://127.0.0.1:9",
                    "rooms": ["!r:x"],
                    "allowedUsers": ["@me:x"],
                    "accessTokenEnv": "syt_Ym90_AbCdEfGhIjKlMnOpQrSt_1a2b3c",
                }
            }
        }
    )
    like_a_name = box.run("--channel", "matrix")
    assert like_a_name.returncode == 2
    assert "AbCdEfGhIjKlMnOpQrSt" not in like_a_name.stderr
    box.settings(
        {"channels": {"matrix": {"homeserver": "http://127.0.0.1:9", "rooms": ["!r:x"], "allowedUsers": ["@me:x"]}}}
    )
    unreachable = box.run("--channel", "matrix", env={TOKEN_ENV: "t"})
    assert unreachable.returncode == 2
    assert unreachable.stderr.startswith("bingo: cannot reach the homeserver http://127.0.0.1:9")
    assert no_traceback(unreachable)


def test_a_homeserver_without_its_scheme_is_exit_2_saying_to_write_it(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings(
        {"channels": {"matrix": {"homeserver": "matrix.example.org", "rooms": ["!r:x"], "allowedUsers": ["@me:x"]}}}
    )
    result = box.run("--channel", "matrix", env={TOKEN_ENV: "t"})
    assert result.returncode == 2
    assert result.stderr == (
        "bingo: channels.matrix in ~/.bingo/settings.json: homeserver 'matrix.example.org' is not a URL: "
        'write it with its scheme: "homeserver": "https://matrix.example.org"\n'
    )


def test_a_room_new_to_bingo_has_its_history_left_unanswered(tmp_path: Path, room: Room, bots: list[Bot]) -> None:
    box = _box(tmp_path, room, [[text("A.")]])
    bot = _start(bots, box, room)
    room.person.say(room.id, "in the first room")
    room.wait_for_body(lambda b: "A." in b, "the first room's answer")
    assert bot.stop() == 0
    second = room.person.create_room(room.bot)
    room.person.say(second, "said before bingo joined")
    time.sleep(1)  # history: older than the join by more than the slack bingo allows
    _script(box, room, [[text("B.")]], matrix={"rooms": [room.id, second]})
    again = _start(bots, box, room)
    room.person.say(second, "said after")
    wait_for(
        lambda: any(e["content"].get("body") == "B." for e in room.person.messages(second)),
        what="the second room's answer",
    )
    assert again.stop() == 0
    prompts = [r["request"]["messages"][-1]["content"][0]["text"] for r in model_requests(box)]
    assert prompts == ["in the first room", "said after"]


def test_a_reply_is_read_without_its_quote_and_an_encrypted_room_is_said_once(
    tmp_path: Path, room: Room, bots: list[Bot]
) -> None:
    # Two turns: the quoted message's, then the reply's, whose answer the test waits for (a
    # wait for the first answer let a loaded machine stop bingo before the reply was read).
    box = _box(tmp_path, room, [[text("Heard.")], [text("Replied.")]])
    bot = _start(bots, box, room)
    for _ in range(2):
        room.person.send(
            room.id,
            {"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AwgA", "sender_key": "k", "session_id": "s"},
            kind="m.room.encrypted",
        )
    quoted = room.person.say(room.id, "what was said")
    room.person.send(
        room.id,
        {
            "msgtype": "m.text",
            "body": f"> <{room.person.id}> what was said\n\nanswer this",
            "m.relates_to": {"m.in_reply_to": {"event_id": quoted}},
        },
    )
    room.wait_for_body(lambda b: "Replied." in b, "the answer to the reply")
    assert bot.stop() == 0
    prompts = [r["request"]["messages"][-1]["content"][0]["text"] for r in model_requests(box)]
    assert prompts[-1] == "answer this"
    assert sum("this room is encrypted" in b for b in room.bodies()) == 1


def test_bingo_says_it_listens_only_once_a_message_sent_then_is_read(
    tmp_path: Path, room: Room, bots: list[Bot]
) -> None:
    # The first sync marks where bingo begins to read (what came before is history): said
    # listening before it was answered, a message sent at once, under load, was history and
    # never answered (test_stop_while_a_question_waits_answers_it_no timed out so).
    with FirstSyncHeld(room.server) as proxy:
        box = _box(tmp_path, room, [[text("Heard.")]], matrix={"homeserver": proxy.url})
        bot = _start_only(bots, box, room)
        wait_for(lambda: proxy.held.is_set() or bot.process.poll() is not None, what="bingo's first sync")
        assert "serving" not in bot.log()  # not said while its first sync is unanswered
        proxy.release.set()
        bot.listening()
        room.person.say(room.id, "said once bingo listens")
        room.wait_for_body(lambda b: "Heard." in b, "the answer")
        assert bot.stop() == 0
    assert f"bingo: listening in 1 room as {room.bot.id}" in bot.stderr.splitlines()
    assert [r["request"]["messages"][-1]["content"][0]["text"] for r in model_requests(box)] == [
        "said once bingo listens"
    ]


def test_stop_while_a_question_waits_answers_it_no(tmp_path: Path, room: Room, bots: list[Bot]) -> None:
    box = _box(tmp_path, room, [[tool("c1", COUNT, {"path": "notes.txt"})], [text("Stopped.")]])
    bot = _start(bots, box, room)
    room.person.say(room.id, "count")
    room.wait_for_body(lambda b: any(x.startswith(f"bingo wants to run {COUNT}") for x in b), "the question")
    room.person.say(room.id, "/stop")
    room.person.say(room.id, "/help")  # runs only once the stopped turn has ended
    room.wait_for_body(lambda b: any("/wordcount" in x for x in b), "the next message to run", timeout=15)
    assert any("/stop" in x and "interrupt the running turn" in x for x in room.bodies())  # /help lists it
    assert bot.stop() == 0
    assert "[error] bingo: the turn was interrupted" in room.bodies()
    assert TABLE_TEXT not in room.bodies()
    assert len(model_requests(box)) == 1


def test_a_long_answer_is_shown_as_it_streams_and_edited_when_complete(
    tmp_path: Path, room: Room, bots: list[Bot]
) -> None:
    # The model finishes once the room shows the first part (the test opens its gate then):
    # no time stands for "still streaming" (a 3 s sleep, one more than STREAM_EVERY, did).
    gate = tmp_path / "gate"
    box = _box(tmp_path, room, [[text("First part. "), {"until": str(gate)}, text("Second part.")]])
    bot = _start(bots, box, room)
    room.person.say(room.id, "take your time")
    room.wait_for_body(lambda b: "First part." in b, "the first part, shown while the model goes on")
    gate.touch()
    said = wait_for(
        lambda: [c for c in room.said_by_bot() if c.get("m.new_content", {}).get("body") == "First part. Second part."],
        what="the final edit",
    )
    assert bot.stop() == 0
    events = [e for e in room.person.messages(room.id) if e["sender"] == room.bot.id]
    [first] = [e for e in events if "m.relates_to" not in e["content"]]
    assert first["content"]["body"] == "First part."  # shown before the model finished
    [final] = said
    assert final["m.relates_to"] == {"rel_type": "m.replace", "event_id": first["event_id"]}
    assert final["body"] == "* First part. Second part."


def test_a_flood_of_plugin_notices_is_a_few_messages_and_one_line_saying_how_many_more(
    tmp_path: Path, room: Room, bots: list[Bot]
) -> None:
    box = _box(
        tmp_path,
        room,
        [[tool("z1", "plugin__notice-flood__poke", {})], [text("done.")]],
        permissions={"allow": ["plugin__*"]},
    )
    box.install(TEST_PLUGINS / "zoo" / "notice-flood")
    bot = _start(bots, box, room)
    began = time.monotonic()
    room.person.say(room.id, "go")
    room.wait_for_body(lambda b: "done." in b, "the turn to end", timeout=60)
    # The room's limit is a burst, then one notice every NOTICE_EVERY seconds: a turn a loaded
    # machine makes last longer earns a notice more per NOTICE_EVERY (test_bounded_notices.py's way).
    earned = math.floor((time.monotonic() - began) / NOTICE_EVERY)
    assert bot.stop() == 0
    notices = [c["body"] for c in room.said_by_bot() if c["msgtype"] == "m.notice"]
    flood = [n for n in notices if n.startswith("[notice] notice-flood: ")]
    assert 1 <= len(flood) <= NOTICE_BURST + earned  # of 20 001 raised
    assert any(
        re.fullmatch(r"\[notice\] bingo: \d+ more notices were left out here; they are in bingo's log", n)
        for n in notices
    ), notices
    assert len(room.said_by_bot()) <= NOTICE_BURST + earned + 5
