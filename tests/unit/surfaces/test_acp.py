"""The editor surface's own logic: a View's markdown fold, a diff View as ACP diffs, a
prompt's content blocks as the turn's text, an editor's MCP servers as plugins, and one
session's questions through an in-memory client."""

from __future__ import annotations

import asyncio
from typing import Any

from bingo.kernel.frames import Frame, PromptFrame
from bingo.surfaces.acp import AcpSession, McpServerSpec, diffs_of, markdown, mcp_servers, prompt_content
from bingo.surfaces.acp._schema import (
    AgentMessageChunk,
    Content,
    DiffContent,
    NoticeUpdate,
    PermissionOutcome,
    PermissionParams,
    PermissionResult,
    TextBlock,
    ToolCallStart,
    ToolCallUpdate,
    Update,
    UserMessageChunk,
)
from bingo.surfaces.acp._schema import ImageBlock as AcpImage
from bingo.surfaces.acp._session import REPLAYED_IMAGE
from bingo.wire import (
    CodeView,
    ImageBlock,
    ListView,
    MarkdownView,
    Notice,
    StackView,
    TableView,
    TextPart,
    TextView,
    ToolOutput,
)


def test_a_table_folds_to_a_markdown_table_with_numbers_right_aligned() -> None:
    view = TableView(title="notes.txt", columns=["what", "count"], rows=[["words", 4], ["a|b", None]])
    assert markdown(view) == "**notes.txt**\n\n| what | count |\n| --- | ---: |\n| words | 4 |\n| a\\|b |  |"


def test_code_is_fenced_longer_than_any_backticks_it_holds() -> None:
    assert markdown(CodeView(text="x = ```", language="py")) == "````py\nx = ```\n````"


def test_text_keeps_its_line_breaks_and_a_stack_and_list_nest() -> None:
    assert markdown(TextView(text="one\ntwo")) == "one  \ntwo"
    view = StackView(
        children=[
            MarkdownView(text="# Title"),
            ListView(items=[TextView(text="a"), MarkdownView(text="b\n\nc")], ordered=True),
        ]
    )
    assert markdown(view) == "# Title\n\n1. a\n2. b\n\n   c"


def test_a_unified_diff_is_one_acp_diff_per_hunk_with_an_absolute_path() -> None:
    text = "--- app.py\n+++ app.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n@@ -9 +9,2 @@\n z\n+w\n\\ No newline at end of file"
    assert diffs_of(CodeView(text=text, language="diff"), "/work") == [
        DiffContent(path="/work/app.py", old_text="x = 1\ny = 2", new_text="x = 1\ny = 3"),
        DiffContent(path="/work/app.py", old_text="z", new_text="z\nw"),
    ]


def test_a_new_file_has_no_old_text_and_other_views_are_no_diff() -> None:
    created = CodeView(text="--- /dev/null\n+++ /abs/new.txt\n@@ -0,0 +1 @@\n+hello", language="diff")
    assert diffs_of(created, "/work") == [DiffContent(path="/abs/new.txt", old_text=None, new_text="hello")]
    assert diffs_of(CodeView(text="--- a\n+++ b\n", language="python"), "/w") is None
    assert diffs_of(TextView(text="--- a\n+++ b\n@@ -1 +1 @@"), "/w") is None


def test_a_prompts_blocks_become_text_and_images_and_what_cannot_be_is_named() -> None:
    blocks: list[Any] = [
        {"type": "text", "text": "look at"},
        {"type": "resource_link", "uri": "file:///work/a.py", "name": "a.py"},
        {"type": "resource", "resource": {"uri": "file:///work/b.md", "text": "has ``` inside"}},
        {"type": "image", "mimeType": "image/png", "data": "AAAA"},
        {"type": "resource", "resource": {"uri": "file:///work/c.gif", "blob": "R0lG", "mimeType": "image/gif"}},
        {
            "type": "resource",
            "resource": {"uri": "file:///work/d.bin", "blob": "AAAA", "mimeType": "application/octet-stream"},
        },
        {"type": "image", "mimeType": "image/png", "uri": "https://example.com/e.png"},
        {"type": "image", "data": "AAAA"},
        {"type": "audio", "mimeType": "audio/wav", "data": "AAAA"},
        "not a block",
    ]
    text, images, skipped = prompt_content(blocks)
    assert text == "look at\n/work/a.py\n/work/b.md:\n````\nhas ``` inside\n````"
    assert images == [ImageBlock(media_type="image/png", data="AAAA"), ImageBlock(media_type="image/gif", data="R0lG")]
    assert skipped == [
        "the binary resource file:///work/d.bin",
        "an image block with no data (bingo takes an image's bytes, not a link to one)",
        "an image block with no mimeType",
        "an audio block",
    ]


def test_an_editors_mcp_servers_are_named_as_plugins_and_sse_is_refused() -> None:
    found, problems = mcp_servers(
        [
            {
                "name": "My Server",
                "command": "/bin/srv",
                "args": ["--stdio", 3],
                "env": [{"name": "K", "value": "v"}, {"bad": 1}],
            },
            {
                "type": "http",
                "name": "remote",
                "url": "http://127.0.0.1:1/mcp",
                "headers": [{"name": "Authorization", "value": "x"}],
            },
            {"type": "sse", "name": "old", "url": "http://x"},
            {"command": "no name"},
        ]
    )
    assert found == [
        McpServerSpec(name="my-server", command="/bin/srv", args=("--stdio",), env=(("K", "v"),)),
        McpServerSpec(name="remote", url="http://127.0.0.1:1/mcp", headers=(("Authorization", "x"),)),
    ]
    assert len(problems) == 2 and "'old' (sse)" in problems[0]


class Client:
    """An in-memory client: every update, and a scripted answer to each question."""

    def __init__(self, *answers: str | None) -> None:
        self.updates: list[Update] = []
        self.asked: list[PermissionParams] = []
        self.answers = list(answers)
        self.waiting = asyncio.Event()

    def update(self, session_id: str, update: Update) -> None:
        self.updates.append(update)

    async def request_permission(self, params: PermissionParams) -> PermissionResult:
        self.asked.append(params)
        answer = self.answers.pop(0)
        if answer is None:  # a person who does not answer
            self.waiting.set()
            await asyncio.Event().wait()
        return PermissionResult(outcome=PermissionOutcome(outcome="selected", option_id=answer))


def test_an_allowed_call_goes_on_under_the_id_its_question_announced() -> None:
    client = Client("allow-once")
    session = AcpSession("s", "/work", client)

    async def go() -> str:
        session.begin()
        answer = await session.permission("bash", {"command": "ls"}, "bash(ls*)")
        session.tool_started("toolu_1", "bash", {"command": "ls"})
        session.tool_finished("toolu_1", "bash", ToolOutput(parts=[TextPart(text="a\nb")]), 0.1)
        return answer

    assert asyncio.run(go()) == "once"
    start, running, done = client.updates
    assert (
        isinstance(start, ToolCallStart)
        and start.status == "pending"
        and start.kind == "execute"
        and start.title == "bash ls"
    )
    assert running == ToolCallUpdate(tool_call_id=start.tool_call_id, status="in_progress")
    assert done == ToolCallUpdate(
        tool_call_id=start.tool_call_id, status="completed", content=[Content(content=TextBlock(text="a\nb"))]
    )
    assert [o.name for o in client.asked[0].options] == ["Allow once", "Always allow bash(ls*)", "Reject"]


def test_a_question_waiting_when_the_prompt_is_cancelled_is_a_no_and_the_call_failed() -> None:
    client = Client(None)
    session = AcpSession("s", "/work", client)

    async def go() -> str:
        session.begin()
        asking = asyncio.ensure_future(session.permission("write", {"path": "a.txt", "content": ""}, "write(a.txt)"))
        await client.waiting.wait()
        session.cancel()
        async with asyncio.timeout(5):
            return await asking

    assert asyncio.run(go()) == "no"
    assert isinstance(client.updates[-1], ToolCallUpdate) and client.updates[-1].status == "failed"


def test_a_plugins_question_is_asked_on_its_running_call_with_its_choices() -> None:
    client = Client("choice-1")
    session = AcpSession("s", "/work", client)

    async def go() -> str:
        session.begin()
        session.tool_started("c1", "plugin__p__t", {})
        return await session.ask("which one?", ["red", "blue"])

    assert asyncio.run(go()) == "blue"
    (asked,) = client.asked
    assert asked.tool_call.tool_call_id == "c1" and [o.name for o in asked.options] == ["red", "blue"]


def test_a_notice_is_never_message_text_and_its_foreign_bytes_are_escaped() -> None:
    client = Client()
    session = AcpSession("s", "/work", client)
    session.text("half a line")
    session.notice(Notice(source="zoo", message="bad \x1b[2J\nsecond", level="warning"))
    session.say("bingo: the turn failed", "error")
    texts = [u.content.text for u in client.updates if isinstance(u, AgentMessageChunk)]
    assert texts == ["half a line"]
    cards = [u for u in client.updates if isinstance(u, ToolCallStart)]
    assert [(c.tool_call_id, c.title, c.kind, c.status, c.meta) for c in cards] == [
        (
            "notice-1",
            "zoo: bad \\x1b[2J second",
            "other",
            "completed",
            {"bingo": {"notice": {"source": "zoo", "level": "warning"}}},
        ),
        (
            "notice-2",
            "bingo: the turn failed",
            "other",
            "failed",
            {"bingo": {"notice": {"source": "bingo", "level": "error"}}},
        ),
    ]
    taking = Client()
    session = AcpSession("s", "/work", taking, notices=True)  # the client takes ACP's notices
    session.notice(Notice(source="zoo", message="careful", level="warning"))
    assert taking.updates == [NoticeUpdate(severity="warning", title="zoo: careful")]


def test_a_hooks_question_on_no_call_is_a_call_of_its_own_closed_by_the_answer() -> None:
    client = Client("choice-1")
    session = AcpSession("s", "/work", client)

    async def go() -> str:
        session.begin()
        return await session.ask("hook guard (zguard) asks: run /deploy?", ["yes", "no"])

    assert asyncio.run(go()) == "no"
    start, end = client.updates
    assert isinstance(start, ToolCallStart) and start.status == "pending" and start.title.startswith("hook guard")
    assert isinstance(end, ToolCallUpdate) and end.tool_call_id == start.tool_call_id and end.status == "failed"
    assert [o.kind for o in client.asked[0].options] == ["allow_once", "reject_once"]


def test_a_replayed_prompts_images_are_user_chunks_and_a_large_one_a_line_naming_it() -> None:
    client = Client()
    session = AcpSession("s", "/work", client)
    small = ImageBlock(media_type="image/png", data="iVBORw0K")
    large = ImageBlock(media_type="image/jpeg", data="/9j/" + "A" * (REPLAYED_IMAGE + 1000))
    frames: list[Frame] = [
        PromptFrame(text="what are these?", turn=1, images=[small, large]),
        PromptFrame(text="", turn=2, images=[small]),
    ]

    async def drain() -> None:
        return None

    asyncio.run(session.replay(frames, drain))
    chunks = [u.content for u in client.updates if isinstance(u, UserMessageChunk)]
    assert chunks[0] == AcpImage(mime_type="image/png", data="iVBORw0K")
    assert isinstance(chunks[1], TextBlock) and chunks[1].text.startswith("[an image (image/jpeg, 36 KiB)")
    assert chunks[2] == TextBlock(text="what are these?")
    assert chunks[3:] == [AcpImage(mime_type="image/png", data="iVBORw0K")]  # an image-only prompt: no empty text


def test_a_permission_question_shows_a_commands_newline_in_its_title_and_its_rule() -> None:
    client = Client("reject")
    session = AcpSession("s", "/work", client)
    command = "ls #'\ntouch pwned #'"

    async def go() -> str:
        session.begin()
        return await session.permission("bash", {"command": command}, f"bash({command})")

    assert asyncio.run(go()) == "no"
    start = client.updates[0]
    assert isinstance(start, ToolCallStart) and start.title == "bash ls #'⏎touch pwned #'"
    assert [o.name for o in client.asked[0].options][1] == "Always allow bash(ls #'⏎touch pwned #')"


def test_a_permission_question_shows_a_long_commands_tail_past_its_title() -> None:
    client = Client("reject")
    session = AcpSession("s", "/work", client)
    command = "echo " + "a" * 200 + "\ntouch pwned"

    async def go() -> str:
        session.begin()
        return await session.permission("bash", {"command": command}, "bash")

    asyncio.run(go())
    start = client.updates[0]
    assert isinstance(start, ToolCallStart) and start.title.endswith("…")
    assert start.content == [Content(content=TextBlock(text="echo " + "a" * 200 + "⏎touch pwned"))]
