"""A prompt's images through the kernel: which are taken (`check_images`), where they go in
the person's message, what the session keeps of them, and how compaction counts them."""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass

import pytest

from bingo.kernel.compaction import TrimCompactor, estimate_tokens, last_exchange
from bingo.kernel.errors import UsageError
from bingo.kernel.frames import PromptFrame, history
from bingo.kernel.gate import Gate
from bingo.kernel.hooks import Hooks
from bingo.kernel.images import MAX_IMAGE, MAX_IMAGES, MAX_PROMPT_IMAGES, check_images
from bingo.kernel.notices import Notices
from bingo.kernel.registry import Registry
from bingo.kernel.settings import Settings
from bingo.kernel.turn import Conversation
from bingo.wire import (
    CompactionContext,
    ContextPiece,
    ContextQuery,
    ContributorSpec,
    HookOutcome,
    HookSpec,
    ImageBlock,
    Json,
    Message,
    TextBlock,
    TextPart,
    ToolResultBlock,
    ToolUseBlock,
)
from tests.unit.kernel.test_dispatch import World
from tests.unit.kernel.test_dispatch import _run as dispatch
from tests.unit.kernel.test_turn import Events, Log, Person, ScriptedProvider


def _image(media_type: str, head: bytes, size: int = 64) -> ImageBlock:
    return ImageBlock(media_type=media_type, data=base64.b64encode(head + b"\0" * size).decode())


PNG = _image("image/png", b"\x89PNG\r\n\x1a\n")
JPEG = _image("image/jpeg", b"\xff\xd8\xff\xe0")
GIF = _image("image/gif", b"GIF89a")
WEBP = _image("image/webp", b"RIFF\0\0\0\0WEBPVP8 ")


def _refusal(images: list[ImageBlock]) -> str:
    with pytest.raises(UsageError) as raised:
        check_images(images)
    return raised.value.line()


def test_the_four_types_the_providers_take_pass() -> None:
    check_images([PNG, JPEG, GIF, WEBP])
    check_images([])


def test_another_type_is_refused_naming_the_types_taken() -> None:
    assert _refusal([ImageBlock(media_type="image/bmp", data="Qk0=")]) == (
        "the image is 'image/bmp', which bingo does not send to a model: send a PNG, JPEG, GIF or WebP image "
        "(image/png, image/jpeg, image/gif, image/webp)"
    )


def test_an_image_past_the_bound_is_refused_with_its_size() -> None:
    big = ImageBlock(media_type="image/png", data=PNG.data + "A" * MAX_IMAGE)
    line = _refusal([PNG, big])
    assert line.startswith(
        f"image 2 is 5 MiB ({len(big.data):,} bytes) as base64, past the 5 MiB (5,242,880 bytes) one image may be"
    )
    assert line.endswith("send a smaller or more compressed image")
    check_images(
        [ImageBlock(media_type="image/png", data=(PNG.data + "A" * MAX_IMAGE)[: MAX_IMAGE // 4 * 4])]
    )  # at the bound: taken


def test_bytes_that_are_another_type_or_no_image_or_no_base64_are_refused() -> None:
    mislabelled = ImageBlock(media_type="image/png", data=JPEG.data)
    assert (
        _refusal([mislabelled])
        == "the image is said to be image/png, but its bytes are a JPEG (image/jpeg): send it with its own media type"
    )
    assert "its bytes are no image bingo knows" in _refusal([ImageBlock(media_type="image/gif", data="aGVsbG8=")])
    assert _refusal([ImageBlock(media_type="image/png", data="not base64!")]).startswith(
        "the image (image/png) is not valid base64"
    )


def test_more_images_than_a_prompt_may_carry_are_refused() -> None:
    assert _refusal([PNG] * (MAX_IMAGES + 1)).startswith(
        f"the prompt has {MAX_IMAGES + 1} images, more than the {MAX_IMAGES}"
    )


def test_images_each_within_the_bound_but_past_the_prompts_in_all_are_refused() -> None:
    each = ImageBlock(media_type="image/png", data="A" * (MAX_PROMPT_IMAGES // 5 + 4))
    assert _refusal([each] * 5) == (
        "the prompt's images are 24 MiB (25,165,840 bytes) of base64 in all, past the 24 MiB (25,165,824 bytes) one prompt may carry: "
        "send fewer or smaller images"
    )


# --- the turn --------------------------------------------------------------------------


@dataclass
class Rewrite:
    """A `prompt.submit` hook that redirects the prompt's text and keeps what it was shown."""

    shown: list[Json]
    spec: HookSpec = HookSpec(name="rewrite", site="prompt", points=["submit"])
    source: str = "test"

    async def decide(self, point: str, payload: Json) -> HookOutcome:
        self.shown.append(payload)
        return HookOutcome(outcome="redirect", value={"text": "rewritten"})

    async def observe(self, point: str, payload: Json) -> None:
        return None


@dataclass
class Quick:
    spec: ContributorSpec = ContributorSpec(name="quick")
    source: str = "test"

    async def contribute(self, query: ContextQuery) -> list[ContextPiece]:
        return [ContextPiece(text="the context", title="quick")]


def _turn(
    prompt: str, images: list[ImageBlock], registry: Registry, notices: Notices
) -> tuple[Conversation, ScriptedProvider, Log]:
    provider, log = ScriptedProvider([[TextBlock(text="a cat")]]), Log()
    settings = Settings(deadlines={"hook/decide": 1.0, "context/contribute": 1.0})

    async def go() -> Conversation:
        async with Hooks(registry.hooks, notices, 1.0) as runner:
            conversation = Conversation(
                registry=registry,
                settings=settings,
                gate=Gate(settings.permissions),
                hooks=runner,
                notices=notices,
                log=log,
                events=Events(),
                asker=Person(),
                session="s1",
                cwd="/tmp",
                provider=provider,
            )
            async with asyncio.timeout(5):
                assert (await conversation.run_turn(prompt, images)).status == "done"
            return conversation

    return asyncio.run(go()), provider, log


def test_the_images_go_first_in_the_persons_message_the_hook_sees_the_text_and_the_session_keeps_them() -> None:
    notices = Notices()
    registry = Registry(notices)
    shown: list[Json] = []
    registry.add_hook(Rewrite(shown))
    conversation, provider, log = _turn("what is this?", [PNG, JPEG], registry, notices)
    assert shown == [{"text": "what is this?"}]
    sent = provider.requests[0].messages[-1]
    assert sent == Message(role="user", content=[PNG, JPEG, TextBlock(text="rewritten")])  # a redirect keeps the images
    (prompt,) = [f for f in log.frames if isinstance(f, PromptFrame)]
    assert prompt.images == [PNG, JPEG] and prompt.text == "rewritten"
    assert history(log.frames) == conversation.messages  # a resumed session sends them again
    assert history(log.frames)[0] == sent


def test_context_pieces_join_the_text_and_the_images_stay_in_the_request() -> None:
    notices = Notices()
    registry = Registry(notices)
    registry.add_contributor(Quick())
    conversation, provider, _ = _turn("describe it", [GIF], registry, notices)
    image, text = provider.requests[0].messages[-1].content
    assert (
        image == GIF
        and isinstance(text, TextBlock)
        and "the context" in text.text
        and text.text.endswith("describe it")
    )
    assert conversation.messages[0] == Message(
        role="user", content=[GIF, TextBlock(text="describe it")]
    )  # pieces not kept


def test_an_image_only_prompt_has_no_empty_text_block() -> None:
    notices = Notices()
    _, provider, log = _turn("", [WEBP], Registry(notices), notices)
    assert provider.requests[0].messages[-1].content == [WEBP]
    assert history(log.frames)[0].content == [WEBP]


# --- the dispatcher --------------------------------------------------------------------


def test_a_bad_image_is_refused_before_any_turn_or_session() -> None:
    async def scenario(world: World) -> World:
        with pytest.raises(UsageError, match="image/bmp"):
            await world.dispatcher.submit("look", [ImageBlock(media_type="image/bmp", data="Qk0=")])
        with pytest.raises(UsageError, match="images go with a prompt, not with a slash command"):
            await world.dispatcher.submit("/help", [PNG])
        return world

    world = dispatch(scenario)
    assert world.session.id is None and world.model.requests == [] and world.chosen == []


# --- compaction ------------------------------------------------------------------------


def test_an_image_is_estimated_as_an_image_not_its_base64() -> None:
    big = ImageBlock(media_type="image/png", data="A" * 400_000)
    with_image = [Message(role="user", content=[big, TextBlock(text="x" * 40)])]
    without = [Message(role="user", content=[TextBlock(text="x" * 40)])]
    tool_image = [Message(role="user", content=[ToolResultBlock(tool_use_id="t", parts=[TextPart(text="x" * 40)])])]
    assert estimate_tokens(with_image) - estimate_tokens(without) == 1_600
    assert estimate_tokens(tool_image) == estimate_tokens(without)


def test_a_prompt_with_images_is_a_prompt_to_compaction_and_trim_folds_it_to_a_word() -> None:
    messages = [
        Message(role="user", content=[PNG, TextBlock(text="first")]),
        Message(role="assistant", content=[ToolUseBlock(id="t1", name="read", input={})]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t1", parts=[TextPart(text="ok")])]),
        Message(role="assistant", content=[TextBlock(text="seen")]),
        *[
            m
            for n in range(4)
            for m in (
                Message(role="user", content=[JPEG]),
                Message(role="assistant", content=[TextBlock(text=f"answer {n}")]),
            )
        ],
    ]
    assert last_exchange(messages) == 10  # the last image-only prompt, not a tool result
    compacted = asyncio.run(TrimCompactor().compact(CompactionContext(messages=messages), "manual")).messages
    head = compacted[0].content[0]
    assert isinstance(head, TextBlock) and "user: [an image] first" in head.text
    assert compacted[2:] == messages[4:]  # the last four prompts kept whole, images and all
