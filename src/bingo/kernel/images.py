"""Images a person gives with a prompt: which are taken, and how large.

Owns the one check an image passes before it becomes part of a turn (and so of the session,
which sends it again every turn it is resumed): one of the types every provider takes
(`IMAGE_TYPES`), base64 that decodes, bytes that are the type they are said to be, and at
most `MAX_IMAGE` characters of base64 each (the Anthropic API refuses an image past 5 MiB
of base64, so larger would fail at the provider, turn after turn), `MAX_IMAGES` a prompt
and `MAX_PROMPT_IMAGES` of base64 in all (the Anthropic API takes 32 MB a request).
It does not read images from anywhere (a surface hands them over as `ImageBlock`s) nor
decide where they go in a message (`frames.prompt_message` does).
"""

from __future__ import annotations

import binascii
from collections.abc import Sequence

from ..wire import ImageBlock
from .errors import UsageError

__all__ = ["IMAGE_TYPES", "MAX_IMAGE", "MAX_IMAGES", "MAX_PROMPT_IMAGES", "check_images"]

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""The media types an image may be: those the Anthropic and OpenAI APIs both take."""

MAX_IMAGE = 5 * 1024 * 1024
"""Characters of base64 one image may be (about 3.75 MiB of image): the Anthropic API's
bound, which it applies to the base64 text, not the decoded bytes."""

MAX_IMAGES = 20
"""Images one prompt may carry."""

MAX_PROMPT_IMAGES = 24 * 1024 * 1024
"""Characters of base64 one prompt's images may be in all: under the 32 MB a request to the
Anthropic API may be, with room for the rest of it."""

_NAMES = {"image/png": "a PNG", "image/jpeg": "a JPEG", "image/gif": "a GIF", "image/webp": "a WebP"}


def _sniff(head: bytes) -> str | None:
    """The image type `head` (an image's first bytes) starts as, or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _size(chars: int) -> str:
    return f"{chars / (1024 * 1024):.1f} MiB".replace(".0 ", " ") if chars >= 1024 * 1024 else f"{chars / 1024:.0f} KiB"


def check_images(images: Sequence[ImageBlock]) -> None:
    """Refuse what a turn cannot send: too many images, too much of them in all, or one of a
    type the providers do not take, too large, not base64, or whose bytes are not what its
    type says.

    Raises:
        UsageError: naming the image (by its place in the prompt) and what was wrong.
    """
    if len(images) > MAX_IMAGES:
        raise UsageError(
            f"the prompt has {len(images)} images, more than the {MAX_IMAGES} one prompt may carry", "send fewer images"
        )
    for at, image in enumerate(images, start=1):
        which = _which(at, images)
        if image.media_type not in IMAGE_TYPES:
            raise UsageError(
                f"{which} is {image.media_type[:60]!r}, which bingo does not send to a model",
                "send a PNG, JPEG, GIF or WebP image (" + ", ".join(IMAGE_TYPES) + ")",
            )
        if len(image.data) > MAX_IMAGE:
            size = len(image.data)
            raise UsageError(
                f"{which} is {_size(size)} ({size:,} bytes) as base64, past the {_size(MAX_IMAGE)} ({MAX_IMAGE:,} bytes) one image may be (the providers refuse larger)",
                "send a smaller or more compressed image",
            )
    total = sum(len(image.data) for image in images)
    if total > MAX_PROMPT_IMAGES:
        raise UsageError(
            f"the prompt's images are {_size(total)} ({total:,} bytes) of base64 in all, past the {_size(MAX_PROMPT_IMAGES)} ({MAX_PROMPT_IMAGES:,} bytes) one prompt may carry",
            "send fewer or smaller images",
        )
    for at, image in enumerate(images, start=1):
        which = _which(at, images)
        try:
            head = binascii.a2b_base64(image.data, strict_mode=True)[:16]
        except (binascii.Error, ValueError):
            raise UsageError(
                f"{which} ({image.media_type}) is not valid base64",
                "send the image's bytes base64-encoded, with no line breaks",
            ) from None
        found = _sniff(head)
        if found != image.media_type:
            what = (
                f"its bytes are {_NAMES[found]} ({found})"
                if found is not None
                else "its bytes are no image bingo knows"
            )
            raise UsageError(f"{which} is said to be {image.media_type}, but {what}", "send it with its own media type")


def _which(at: int, images: Sequence[ImageBlock]) -> str:
    return f"image {at}" if len(images) > 1 else "the image"
