"""Image prompts through `bingo --acp`, driven by the Python `agent-client-protocol` client
with the scripted model: `initialize` offers them, a prompt's image reaches the model, a
loaded session replays it and sends it to the model again, and an image a turn cannot send
(a type the providers do not take, one too large, one mislabelled, too many bytes in all)
is refused in a line, before any model."""

from __future__ import annotations

import asyncio
import base64
import struct
import zlib
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from acp.schema import ImageContentBlock, UserMessageChunk

from bingo.kernel.images import MAX_IMAGE, MAX_PROMPT_IMAGES
from bingo.surfaces.acp._serve import LINE
from tests.e2e._acp import WAIT, Recorder, connected, text
from tests.e2e._bingo import Sandbox
from tests.e2e._scripted import model_requests, use_scripted_model
from tests.e2e._scripted import text as say


def run(coro: Coroutine[Any, Any, None]) -> None:
    async def bounded() -> None:
        async with asyncio.timeout(90):
            await coro

    asyncio.run(bounded())


def _png() -> str:
    """A real one-pixel PNG, base64-encoded."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    raw = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(b"\0\xff\0\0"))
        + chunk(b"IEND", b"")
    )
    return base64.b64encode(raw).decode()


PNG = _png()


def image(data: str, mime_type: str = "image/png") -> ImageContentBlock:
    return ImageContentBlock(type="image", mime_type=mime_type, data=data)


def test_an_image_prompt_reaches_the_model_and_a_loaded_session_replays_it_and_sends_it_again(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    use_scripted_model(box, [[say("A red pixel.")]])
    first = Recorder()
    ids: list[str] = []

    async def talk() -> None:
        async with connected(box, first) as conn:
            init = await conn.initialize(protocol_version=1)
            assert init.agent_capabilities is not None and init.agent_capabilities.prompt_capabilities is not None
            assert init.agent_capabilities.prompt_capabilities.image is True
            session = await conn.new_session(cwd=str(box.project))
            ids.append(session.session_id)
            answer = await conn.prompt(session_id=session.session_id, prompt=[text("what is this?"), image(PNG)])
            assert answer.stop_reason == "end_turn"

    run(talk())
    assert "A red pixel." in first.agent_text()
    (request,) = model_requests(box)
    assert request["request"]["messages"][-1]["content"] == [
        {"type": "image", "mediaType": "image/png", "data": PNG},
        {"type": "text", "text": "what is this?"},
    ]

    use_scripted_model(box, [[say("Still red.")]])  # the second bingo's model
    again = Recorder()

    async def load() -> None:
        async with connected(box, again) as conn:
            await conn.load_session(cwd=str(box.project), session_id=ids[0])
            await conn.prompt(session_id=ids[0], prompt=[text("and now?")])

    run(load())
    replayed = [u.content for _, u in again.updates if isinstance(u, UserMessageChunk)]
    assert (
        isinstance(replayed[0], ImageContentBlock) and replayed[0].data == PNG and replayed[0].mime_type == "image/png"
    )
    assert again.user_text() == "what is this?"
    resumed = model_requests(box)[-1]["request"]["messages"]
    assert resumed[0]["content"][0] == {
        "type": "image",
        "mediaType": "image/png",
        "data": PNG,
    }  # the model sees it again
    assert resumed[-1]["content"] == [{"type": "text", "text": "and now?"}]


def test_an_image_of_another_type_or_too_large_is_refused_in_a_line_before_any_model(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    use_scripted_model(box, [[say("never")]])
    client = Recorder()
    large = PNG + "A" * MAX_IMAGE
    each = PNG + "A" * (MAX_PROMPT_IMAGES // 5)

    async def go() -> None:
        async with connected(box, client) as conn:
            session = await conn.new_session(cwd=str(box.project))
            wrong = await conn.prompt(
                session_id=session.session_id, prompt=[text("look"), image("Qk0eAAAAAAAAAA==", "image/bmp")]
            )
            assert wrong.stop_reason == "end_turn"
            big = await conn.prompt(session_id=session.session_id, prompt=[text("look"), image(large)])
            assert big.stop_reason == "end_turn"
            mislabelled = await conn.prompt(session_id=session.session_id, prompt=[image(PNG, "image/jpeg")])
            assert mislabelled.stop_reason == "end_turn"
            # Five images each within the bound: a message longer than the bridge's 16 MiB
            # lines, read whole, and refused for what they are in all.
            many = await conn.prompt(session_id=session.session_id, prompt=[text("all of them"), *[image(each)] * 5])
            assert many.stop_reason == "end_turn"

    run(go())
    said = client.notice_text()
    assert (
        "bingo: the image is 'image/bmp', which bingo does not send to a model: send a PNG, JPEG, GIF or WebP image"
        in said
    )
    assert (
        f"bingo: the image is 5 MiB ({len(large):,} bytes) as base64, past the 5 MiB (5,242,880 bytes) one image may be (the providers refuse larger): send a smaller or more compressed image"
        in said
    )
    assert (
        "bingo: the image is said to be image/jpeg, but its bytes are a PNG (image/png): send it with its own media type"
        in said
    )
    assert (
        f"bingo: the prompt's images are 24 MiB ({len(each) * 5:,} bytes) of base64 in all, past the 24 MiB (25,165,824 bytes) one prompt may carry: send fewer or smaller images"
        in said
    )
    assert model_requests(box) == []  # no turn reached the model
    assert "never" not in client.agent_text()


def test_a_message_longer_than_bingo_reads_is_said_in_the_open_session(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    use_scripted_model(box, [[say("never")]])
    client = Recorder()

    async def go() -> None:
        async with connected(box, client) as conn:
            session = await conn.new_session(cwd=str(box.project))
            # Past LINE (32 MiB): bingo cannot read it, so cannot answer it; the person is told.
            lost = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[image(PNG + "A" * LINE)]))
            async with asyncio.timeout(WAIT * 2):
                while "could not be read" not in client.notice_text():
                    await asyncio.sleep(0.05)
            lost.cancel()
            answer = await conn.prompt(session_id=session.session_id, prompt=[text("still there?")])
            assert answer.stop_reason == "end_turn"  # the connection lives on

    run(go())
    assert (
        "bingo: a message from the editor could not be read, so it is not answered: line longer than the limit"
        in client.notice_text()
    )
    assert "never" in client.agent_text()
