"""The Matrix channel's logic without a homeserver: a View's HTML, what a room is sent and
how often, a question's answers, and the client's retries (httpx's MockTransport)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from bingo.kernel.errors import SettingsError
from bingo.surfaces.channel import Homeserver, Outbox, RoomSurface, message, view_html
from bingo.surfaces.channel._outbox import BODY_LIMIT
from bingo.surfaces.channel._room import NOTICE_BURST, NOTICE_EVERY
from bingo.surfaces.channel._sync import handle as _handle
from bingo.surfaces.channel._worker import Readers as _Readers
from bingo.surfaces.channel._worker import Room as _Room
from bingo.wire import (
    CodeView,
    Json,
    ListView,
    MarkdownView,
    Notice,
    StackView,
    TableView,
    TextPart,
    TextView,
    ToolOutput,
)


def test_a_table_is_an_html_table_and_every_string_is_escaped() -> None:
    view = TableView(title="a<b", columns=["what", "n"], rows=[["<script>x</script>", 3], ["&", 2.0], ["gap", None]])
    assert view_html(view) == (
        "<p><strong>a&lt;b</strong></p><table><thead><tr><th>what</th><th>n</th></tr></thead><tbody>"
        "<tr><td>&lt;script&gt;x&lt;/script&gt;</td><td>3</td></tr><tr><td>&amp;</td><td>2</td></tr><tr><td>gap</td><td></td></tr></tbody></table>"
    )


def test_code_is_pre_code_and_the_rest_nests() -> None:
    assert (
        view_html(CodeView(text="if a < b:\n    pass", language='py"x'))
        == '<pre><code class="language-py&quot;x">if a &lt; b:\n    pass</code></pre>'
    )
    assert view_html(MarkdownView(text="**<i>**")) == "<p><strong>&lt;i&gt;</strong></p>"
    assert view_html(MarkdownView(text="no markup\nat all")) == "no markup<br/>at all"
    stacked = StackView(children=[TextView(text="one\ntwo"), ListView(items=[TextView(text="x")], ordered=True)])
    assert view_html(stacked) == "<div>one<br/>two</div><div><ol><li>x</li></ol></div>"


def test_a_message_past_the_limit_is_cut_and_html_that_would_not_fit_is_left_out() -> None:
    content = message("x" * (BODY_LIMIT + 10), html="<p>" + "y" * BODY_LIMIT + "</p>")
    body = content["body"]
    assert isinstance(body, str) and body.endswith("(10 more characters cut)")
    assert "formatted_body" not in content
    assert message("hi", notice=True) == {"msgtype": "m.notice", "body": "hi"}


class _Sent(Outbox):
    """An outbox that keeps what it is given (and whether it was put past a mute), and which
    rooms are muted."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.always: list[bool] = []
        self.replaces: list[str | None] = []
        self.muted: set[str] = set()

    def put(self, room: str, content: dict[str, Json], *, replaces: str | None = None, always: bool = False) -> str:
        self.sent.append(content)
        self.always.append(always)
        self.replaces.append(replaces)
        return f"t{len(self.sent)}"

    def mute(self, room: str) -> None:
        self.muted.add(room)

    def unmute(self, room: str) -> None:
        self.muted.discard(room)


def _room(clock: list[float] | None = None, seconds: float = 5.0) -> tuple[RoomSurface, _Sent]:
    sent = _Sent()
    now = clock if clock is not None else [0.0]
    return RoomSurface("!r:x", sent, question_seconds=seconds, clock=lambda: now[0]), sent


def test_a_turns_text_is_one_message_and_its_calls_one_status_message_edited_in_place() -> None:
    room, sent = _room()
    for piece in ("Let me ", "count.\x1b[2J"):
        room.text(piece)
    assert sent.sent == []  # nothing per delta
    room.tool_started("c1", "plugin__wordcount__count", {"path": "notes.txt"})
    view = TableView(columns=["a"], rows=[[1]])
    room.tool_finished(
        "c1", "plugin__wordcount__count", ToolOutput(parts=[TextPart(text="1 word\nmore")], display=view), 0.1
    )
    room.tool_started("c2", "bash", {"command": "false"})
    room.tool_finished("c2", "bash", ToolOutput(parts=[TextPart(text="exit 1")], is_error=True), 0.1)
    room.text("It has **1** word.")
    room.end()
    assert [(c["msgtype"], c["body"], r) for c, r in zip(sent.sent, sent.replaces)] == [
        ("m.notice", "… plugin__wordcount__count notes.txt", None),
        ("m.notice", "✓ plugin__wordcount__count notes.txt: 1 word", "t1"),
        ("m.notice", "✓ plugin__wordcount__count notes.txt: 1 word\n… bash false", "t1"),
        ("m.notice", "✓ plugin__wordcount__count notes.txt: 1 word\n✗ bash false: exit 1", "t1"),
        ("m.text", "Let me count.\\x1b[2J\n\nIt has **1** word.", None),
    ]
    assert sent.sent[-1]["formatted_body"] == "<p>Let me count.\\x1b[2J</p>\n<p>It has <strong>1</strong> word.</p>"


def test_a_question_shows_the_answer_so_far_and_what_follows_is_a_message_of_its_own() -> None:
    asyncio.run(_a_question_shows_the_answer_so_far())


async def _a_question_shows_the_answer_so_far() -> None:
    room, sent = _room()
    room.text("I will run it.")
    asked = asyncio.create_task(room.permission("bash", {"command": "ls"}, "bash"))
    await asyncio.sleep(0)
    assert room.answer("yes") and await asked == "once"
    room.text("It ran.")
    room.end()
    assert [c["body"].split("\n")[0] for c in sent.sent] == [
        "I will run it.",
        'bingo wants to run bash {"command": "ls"}',
        "It ran.",
    ]
    assert sent.replaces == [None, None, None]


def test_no_absolute_path_of_the_bots_machine_is_sent_to_the_room(tmp_path: Any) -> None:
    from bingo.surfaces.channel._paths import Paths

    home = tmp_path / "home"
    project = home / "code" / "calc"
    paths = Paths(cwd=project, home=home, bingo_home=home / ".bingo")
    sent = _Sent()
    room = RoomSurface("!r:x", sent, question_seconds=5.0, paths=paths)
    room.notice(
        Notice(
            source="bingo", message=f"plugin x failed; its log is {home}/.bingo/data/logs/plugin-x.log", level="warning"
        )
    )
    room.notice(Notice(source="x", message="see /var/lib/x/state.db and /stop"))
    room.tool_started("c1", "read", {"path": f"{project}/src/calc.py"})
    room.text(f"Read {project}/src/calc.py and {home}/notes.")
    room.end()
    bodies = [c["body"] for c in sent.sent]
    assert bodies == [
        "[warning] bingo: plugin x failed; its log is ~/.bingo/data/logs/plugin-x.log",
        "[notice] x: see …/state.db and /stop",
        "… read src/calc.py",
        "Read src/calc.py and ~/notes.",
    ]
    assert all(str(tmp_path) not in str(c) for c in sent.sent)
    assert (
        Paths(cwd=project, home=home, bingo_home=tmp_path / "bh").known(f"{tmp_path}/bh/data/x {project} {project}2/y")
        == "$BINGO_HOME/data/x . ~/code/calc2/y"
    )


def test_markdown_is_html_with_nothing_raw_passing() -> None:
    from bingo.surfaces.channel._html import markdown_html

    assert markdown_html("just words,\non two lines") is None  # the body says it all
    html = markdown_html(
        '# T\n\n*a* `b<c>` <img src=x onerror=y> [j](javascript:alert(1)) [k](https://e.org/?q="x") ![i](https://e.org/i.png)\n\n- one\n- two\n\n```py\nx < 1\n```'
    )
    assert html == (
        "<h1>T</h1>\n<p><em>a</em> <code>b&lt;c&gt;</code> &lt;img src=x onerror=y&gt; [j](javascript:alert(1)) "
        '<a href="https://e.org/?q=%22x%22">k</a> !<a href="https://e.org/i.png">i</a></p>\n'
        '<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n<pre><code class="language-py">x &lt; 1\n</code></pre>'
    )


def test_notices_past_the_rooms_limit_go_to_the_log_and_are_counted_once() -> None:
    clock = [0.0]
    room, sent = _room(clock)
    for n in range(NOTICE_BURST + 5):
        room.notice(Notice(source="chatty", message=f"line {n}"))
    assert len(sent.sent) == NOTICE_BURST
    clock[0] += NOTICE_EVERY  # one more is earned
    room.notice(Notice(source="chatty", message="later"))
    room.end()
    assert [c["body"] for c in sent.sent[NOTICE_BURST:]] == [
        "[notice] chatty: later",
        "[notice] bingo: 5 more notices were left out here; they are in bingo's log",
    ]


def test_a_permission_question_takes_yes_always_no_and_silence_is_no() -> None:
    asyncio.run(_a_permission_question_takes_yes_always_no_and_silence_is_no())


async def _a_permission_question_takes_yes_always_no_and_silence_is_no() -> None:
    room, sent = _room(seconds=0.2)
    for said, expected in (("yes", "once"), ("Always.", "always"), ("NO", "no")):
        asked = asyncio.create_task(room.permission("bash", {"command": "ls"}, "bash"))
        await asyncio.sleep(0)
        assert room.asking()
        assert not room.answer("maybe")  # not an answer: it stays a message
        assert room.answer(said)
        assert await asked == expected
    assert await room.permission("bash", {}, "bash") == "no"
    assert sent.sent[-1]["body"] == "[notice] bingo: no answer in 0.2 s: taken as no"
    assert sent.sent[0]["body"].startswith(
        'bingo wants to run bash {"command": "ls"}\nAnswer yes (this once), always (allow bash from now on) or no.'
    )


def test_a_plugins_question_with_choices_answers_the_choice_as_spelled() -> None:
    asyncio.run(_a_plugins_question_with_choices_answers_the_choice_as_spelled())


async def _a_plugins_question_with_choices_answers_the_choice_as_spelled() -> None:
    room, _ = _room()
    asked = asyncio.create_task(room.ask("proceed?", ["Yes", "No"]))
    await asyncio.sleep(0)
    assert room.answer("yes")
    assert await asked == "Yes"


def test_a_send_that_fails_is_retried_with_the_same_transaction_id() -> None:
    asyncio.run(_a_send_that_fails_is_retried_with_the_same_transaction_id())


async def _a_send_that_fails_is_retried_with_the_same_transaction_id() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        if len(seen) < 3:
            raise httpx.ConnectError("refused")
        return httpx.Response(200, json={"event_id": "$e"})

    events: list[str] = []
    naps: list[float] = []

    async def nap(seconds: float) -> None:
        naps.append(seconds)

    server = Homeserver(
        "http://hs",
        "tok",
        on_down=lambda why: events.append("down"),
        on_up=lambda s: events.append("up"),
        transport=httpx.MockTransport(handler),
        sleep=nap,
    )
    assert await server.send("!r:x", "txn-1", {"msgtype": "m.text", "body": "hi"}) == "$e"
    await server.aclose()
    assert seen == ["/_matrix/client/v3/rooms/!r:x/send/m.room.message/txn-1"] * 3
    assert events == ["down", "up"]  # one outage, said once
    assert naps == [0.5, 1.0]


def test_an_edit_put_while_another_of_the_same_message_waits_replaces_it() -> None:
    asyncio.run(_an_edit_put_while_another_waits_replaces_it())


async def _an_edit_put_while_another_waits_replaces_it() -> None:
    sent: list[Any] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json={"event_id": f"$e{len(sent)}"})

    server = Homeserver(
        "http://hs", "tok", on_down=lambda why: None, on_up=lambda s: None, transport=httpx.MockTransport(handler)
    )
    outbox = Outbox(server)
    status = outbox.put("!r:x", message("… read a", notice=True))
    for line in ("✓ read a", "✓ read a\n… read b", "✓ read a\n✓ read b"):
        outbox.put("!r:x", message(line, notice=True), replaces=status)  # none sent yet: one edit
    outbox.put("!r:x", message("Done."))
    sending = asyncio.create_task(outbox.run())
    await outbox.drain(5)
    sending.cancel()
    await server.aclose()
    assert [(m["body"], m.get("m.new_content", {}).get("body"), m.get("m.relates_to")) for m in sent] == [
        ("… read a", None, None),
        ("* ✓ read a\n✓ read b", "✓ read a\n✓ read b", {"rel_type": "m.replace", "event_id": "$e1"}),
        ("Done.", None, None),
    ]


def test_a_wrong_token_is_a_settings_error_that_never_names_it() -> None:
    asyncio.run(_a_wrong_token_is_a_settings_error_that_never_names_it())


async def _a_wrong_token_is_a_settings_error_that_never_names_it() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.headers["Authorization"] == "Bearer syt_secret"
        return httpx.Response(401, json={"errcode": "M_UNKNOWN_TOKEN", "error": "Invalid access token passed."})

    server = Homeserver("http://hs", "syt_secret", transport=httpx.MockTransport(handler))
    with pytest.raises(SettingsError) as raised:
        await server.whoami()
    await server.aclose()
    assert "M_UNKNOWN_TOKEN" in raised.value.line()
    assert "syt_secret" not in raised.value.line()


def test_a_permission_question_in_the_room_shows_a_commands_newline() -> None:
    asyncio.run(_a_permission_question_in_the_room_shows_a_commands_newline())


async def _a_permission_question_in_the_room_shows_a_commands_newline() -> None:
    room, sent = _room(seconds=0.2)
    command = "ls #'\ntouch pwned #'"
    asked = asyncio.create_task(room.permission("bash", {"command": command}, f"bash({command})"))
    await asyncio.sleep(0)
    assert room.answer("no")
    assert await asked == "no"
    assert sent.sent[0]["body"].startswith(
        'bingo wants to run bash {"command": "ls #\'\\ntouch pwned #\'"}\n'
        "Answer yes (this once), always (allow bash(ls #'⏎touch pwned #') from now on) or no."
    )


def _member(user: str, membership: str) -> dict[str, Json]:
    return {"type": "m.room.member", "state_key": user, "sender": user, "content": {"membership": membership}}


def _said(body: str) -> dict[str, Json]:
    return {"type": "m.room.message", "sender": "@me:x", "content": {"msgtype": "m.text", "body": body}}


def _batch(*events: dict[str, Json]) -> dict[str, Json]:
    return {"rooms": {"join": {"!r:x": {"timeline": {"events": list(events)}}}}}


def test_a_member_who_joins_before_a_message_in_one_sync_silences_the_room_before_it_is_taken(
    capsys: pytest.CaptureFixture[str],
) -> None:
    sent = _Sent()
    room = _Room("!r:x", RoomSurface("!r:x", sent, question_seconds=5.0), sent)
    readers = _Readers(me="@bot:x", allowed=frozenset({"@me:x"}), shared=False)
    room.judge({"@bot:x", "@me:x"}, readers)
    assert not room.silent and sent.sent == []
    _handle(_batch(_said("before"), _member("@eve:x", "join"), _said("after")), {"!r:x": room}, readers)
    assert room.silent and room.queue.empty()  # "before" was dropped at the join, "after" ignored
    assert sent.muted == {"!r:x"}
    line = "@eve:x is in it too, and everyone in a room reads what bingo says (set channels.matrix.sharedRooms to true to answer in rooms others read)"
    assert [c["body"] for c in sent.sent] == [f"bingo does not answer in this room: {line}"] and sent.always == [True]
    assert capsys.readouterr().err == f"bingo: not answering in !r:x: {line}\n"
    _handle(_batch(_member("@eve:x", "invite"), _member("@eve:x", "leave"), _said("now")), {"!r:x": room}, readers)
    assert not room.silent and sent.muted == set()
    assert room.queue.get_nowait() == "now"
    assert sent.sent[-1]["body"] == "only the allowed users are in this room again: bingo answers here"


def test_with_shared_rooms_a_member_changes_nothing() -> None:
    sent = _Sent()
    room = _Room("!r:x", RoomSurface("!r:x", sent, question_seconds=5.0), sent)
    readers = _Readers(me="@bot:x", allowed=frozenset({"@me:x"}), shared=True)
    _handle(_batch(_member("@eve:x", "join"), _said("hi")), {"!r:x": room}, readers)
    assert not room.silent and room.queue.get_nowait() == "hi" and sent.sent == []


def test_a_subagents_permission_question_in_the_room_names_the_agent() -> None:
    asyncio.run(_a_subagents_permission_question_in_the_room_names_the_agent())


async def _a_subagents_permission_question_in_the_room_names_the_agent() -> None:
    room, sent = _room(seconds=0.2)
    asked = asyncio.create_task(
        room.agent_permission("a1", "reviewer", "bash", {"command": "ls"}, "bash(ls)", "", "/p")
    )
    await asyncio.sleep(0)
    assert room.answer("yes")
    assert await asked == "once"
    assert sent.sent[0]["body"].startswith(
        'agent reviewer wants to run bash {"command": "ls"}\nAnswer yes (this once), always (allow bash(ls) from now on)'
    )
