"""What a person in a Matrix room reads (issue 25 items 7 and 8, ADR-0037), through the real
`bingo --channel matrix` against a real homeserver: one message per answer, its markdown as
HTML; a turn's calls as one status message edited in place; bingo's notices as `m.notice`
lines marked as bingo's and never sent to the model; no absolute path of the bot's machine
in any message; `/help` listing what works in a room; `/clear` starting a fresh
conversation. The evidence is what the homeserver holds and what the scripted model was
sent."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from bingo.kernel.frames import PromptFrame
from bingo.store import SessionStore
from tests.e2e._bingo import TEST_PLUGINS
from tests.e2e._scripted import model_requests, text, tool
from tests.e2e._synapse import homeserver
from tests.e2e.test_matrix_channel import COUNT, Bot, Room, _box, _script, _start, bots, room

__all__ = ["bots", "homeserver", "room"]  # fixtures


def _everything_sent(room: Room) -> list[dict[str, Any]]:
    """Every event the bot sent to the room, edits included, whole."""
    return [e for e in room.person.messages(room.id) if e["sender"] == room.bot.id]


def _said_to_model(requests: list[dict[str, Any]]) -> str:
    return json.dumps([r["request"]["messages"] for r in requests])


def test_an_answer_is_one_message_in_markdown_its_calls_one_status_and_notices_are_bingos_with_no_path(
    tmp_path: Path, room: Room, bots: list[Bot]
) -> None:
    box = _box(tmp_path, room, [])
    replies = [
        [text("Let me count."), tool("c1", COUNT, {"path": "notes.txt"})],
        [text("Counted.")],
        # Absolute paths, as models write them: the project's and the home directory's.
        [
            text("Counting **again** in "),
            text(f"{box.project}/notes.txt, and {box.home}/elsewhere."),
            tool("c2", COUNT, {"path": "notes.txt"}),
        ],
        [text("It has *9* words:\n\n- the\n- fox\n\n`done`")],
    ]
    _script(box, room, replies)
    bot = _start(bots, box, room)
    room.person.say(room.id, "count the words")
    room.wait_for_body(lambda b: any(x.startswith(f"bingo wants to run {COUNT}") for x in b), "the question")
    room.person.say(room.id, "always")  # bingo says where it saved the rule: a notice naming a path
    room.wait_for_body(lambda b: "Counted." in b, "the first turn's end")
    room.person.say(room.id, "and again")
    room.wait_for_body(lambda b: any(x.startswith("Counting **again**") for x in b), "the second turn's answer")
    assert bot.stop() == 0
    final = room.final()
    # The second turn (nothing asked): its text, before and after its call, is one message.
    [answer] = [c for c in final if c.get("body", "").startswith("Counting **again**")]
    assert answer["msgtype"] == "m.text"
    assert (
        answer["body"]
        == "Counting **again** in notes.txt, and ~/elsewhere.\n\nIt has *9* words:\n\n- the\n- fox\n\n`done`"
    )
    assert answer["format"] == "org.matrix.custom.html"
    assert answer["formatted_body"] == (
        "<p>Counting <strong>again</strong> in notes.txt, and ~/elsewhere.</p>\n<p>It has <em>9</em> words:</p>\n"
        "<ul>\n<li>the</li>\n<li>fox</li>\n</ul>\n<p><code>done</code></p>"
    )
    after_question = final[[c.get("body", "").startswith("bingo wants to run") for c in final].index(True) + 1 :]
    texts = [c["body"] for c in after_question if c["msgtype"] == "m.text"]
    assert texts == ["Counted.", answer["body"]]  # one message per answer: no piece of one on its own
    # Each turn's calls are one status message, edited in place (m.replace), not a message a call.
    counted = f"✓ {COUNT} notes.txt: notes.txt: 9 words, 3 lines, 44 characters"
    statuses = [c for c in final if c["msgtype"] == "m.notice" and c["body"].startswith(("…", "✓", "✗"))]
    assert [s["body"] for s in statuses] == [counted, counted]
    sent = _everything_sent(room)
    made = [
        e
        for e in sent
        if e["content"]["msgtype"] == "m.notice"
        and e["content"]["body"].startswith("…")
        and "m.relates_to" not in e["content"]
    ]
    edited = [
        e for e in sent if (e["content"].get("m.relates_to") or {}).get("event_id") in {m["event_id"] for m in made}
    ]
    assert len(made) == 2 and edited  # sent once a turn, then edited
    assert not any(c["body"] == "a\n-\n1" or c["body"].startswith("notes.txt\nwhat") for c in final)  # no View a call
    # bingo's notice is an m.notice marked as bingo's, and its path is the project's, relative.
    notice = "[notice] bingo: allowed plugin__wordcount__count from now on: saved in .bingo/settings.local.json"
    [said] = [c for c in final if c.get("body") == notice]
    assert said["msgtype"] == "m.notice"
    # No absolute path of the bot's machine anywhere in the room, edits and HTML included.
    assert str(tmp_path) not in json.dumps(_everything_sent(room))
    # A notice is never the model's: nothing of it was sent to the model.
    requests = model_requests(box)
    assert len(requests) == 4
    assert "allowed plugin__wordcount__count" not in _said_to_model(requests)
    assert "[notice]" not in _said_to_model(requests)


BUILT_INS_IN_A_ROOM = {
    "clear",
    "compact",
    "context",
    "help",
    "plugins",
    "sandbox",
    "sessions",
    "stop",
    "tools",
    "usage",
}


def test_help_lists_what_works_in_a_room_and_clear_starts_a_fresh_conversation(
    tmp_path: Path, room: Room, bots: list[Bot]
) -> None:
    box = _box(tmp_path, room, [[text("One.")], [text("Two.")], [text("Three.")]])
    bot = _start(bots, box, room)
    room.person.say(room.id, "/help")
    room.wait_for_body(lambda b: any(x.startswith("bingo\n") for x in b), "the help")
    [help_text] = [x for x in room.bodies() if x.startswith("bingo\n")]
    listed = set(re.findall(r"^/(\S+)", help_text, re.M))
    assert BUILT_INS_IN_A_ROOM <= listed
    assert not listed & {"exit", "quit"}
    room.person.say(room.id, "first")
    room.wait_for_body(lambda b: "One." in b, "the first answer")
    room.person.say(room.id, "/clear")
    room.wait_for_body(lambda b: any(x.startswith("a fresh conversation starts") for x in b), "/clear's answer")
    room.person.say(room.id, "second")
    room.wait_for_body(lambda b: "Two." in b, "the answer in the fresh conversation")
    assert bot.stop() == 0
    requests = model_requests(box)
    assert [[block.get("text") for m in r["request"]["messages"] for block in m["content"]] for r in requests] == [
        ["first"],
        ["second"],
    ]
    state = json.loads((box.bingo_home / "data" / "channels" / "matrix.json").read_text(encoding="utf-8"))
    fresh = state["sessions"][room.id]
    with SessionStore(box.bingo_home / "data" / "sessions.db") as store:
        kept = [s.id for s in store.sessions(str(box.project))]
        assert len(kept) == 2 and fresh in kept  # the old conversation is kept in the store
        [old] = [s for s in kept if s != fresh]
        assert [f.text for f in store.frames(old) if isinstance(f, PromptFrame)] == ["first"]
        assert [f.text for f in store.frames(fresh) if isinstance(f, PromptFrame)] == ["second"]
    # A restart continues the fresh conversation, not the cleared one.
    _script(box, room, [[text("Three.")]])
    again = _start(bots, box, room)
    room.person.say(room.id, "third")
    room.wait_for_body(lambda b: "Three." in b, "the answer after the restart")
    assert again.stop() == 0
    assert [block.get("text") for m in model_requests(box)[-1]["request"]["messages"] for block in m["content"]] == [
        "second",
        "Two.",
        "third",
    ]


def test_a_plugin_that_dies_is_said_with_its_log_named_short(tmp_path: Path, room: Room, bots: list[Bot]) -> None:
    box = _box(tmp_path, room, [])
    box.install(TEST_PLUGINS / "crashy")
    _script(
        box,
        room,
        [[tool("b1", "plugin__crashy__boom", {})], [text("It died.")]],
        permissions={"allow": ["plugin__crashy__*"]},
    )
    bot = _start(bots, box, room)
    room.person.say(room.id, "boom")
    room.wait_for_body(lambda b: "It died." in b, "the turn's end")
    assert bot.stop() == 0
    sent = json.dumps(_everything_sent(room), ensure_ascii=False)
    final = room.final_bodies()
    # The call's status line and bingo's notice each name the log, by bingo's directory.
    assert sum("log: ~/.bingo/data/logs/plugin-crashy.log" in body for body in final) == 2, final
    assert str(tmp_path) not in sent
