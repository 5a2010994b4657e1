"""Model text as markdown while it streams: cut into blocks as it arrives, each block drawn
once it is complete (ADR-0017).

Owns where a block ends: at a blank line outside a code fence, or at the end of the text
(the end of a response, or a tool call starting). A fence (three or more backticks or
tildes) holds its blank lines, so a code block is drawn whole and highlighted. What is not
complete yet stays raw in the terminal's live area, where `pending` gives its last lines.

It does not escape: `_draw.markdown` renders a block and escapes what rich made of it.
"""

from __future__ import annotations

import re

__all__ = ["Blocks"]

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
"""A line that opens or closes a code fence (CommonMark: up to three spaces of indent)."""

_LIVE_LINES = 6
"""Lines of the unfinished block the live area shows: a long code block being written must
not push the prompt off the screen."""


class Blocks:
    """The text of one response, cut at block ends."""

    def __init__(self) -> None:
        self._done: list[str] = []
        """Complete lines of the block being read."""
        self._line = ""
        """The line not ended yet."""
        self._fence: str | None = None
        """The fence the block is inside of (its marker), if any."""

    def feed(self, text: str) -> list[str]:
        """Take `text` (a streamed delta); the blocks it completed, in order."""
        finished: list[str] = []
        self._line += text
        while "\n" in self._line:
            line, _, self._line = self._line.partition("\n")
            block = self._take(line.removesuffix("\r"))
            if block is not None:
                finished.append(block)
        return finished

    def _take(self, line: str) -> str | None:
        fence = _FENCE.match(line)
        if self._fence is None:
            if not line.strip():
                return self._cut()
            if fence is not None:
                self._fence = fence.group(1)
        elif (
            fence is not None
            and fence.group(1)[0] == self._fence[0]
            and len(fence.group(1)) >= len(self._fence)
            and not line[fence.end() :].strip()
        ):
            self._fence = None
            self._done.append(line)
            return self._cut()
        self._done.append(line)
        return None

    def _cut(self) -> str | None:
        block = "\n".join(self._done)
        self._done = []
        return block if block.strip() else None

    def rest(self) -> str | None:
        """The end of the text: what is left, as the last block (None when only blank)."""
        if self._line:
            self._done.append(self._line.removesuffix("\r"))
            self._line = ""
        self._fence = None
        return self._cut()

    def pending(self) -> str:
        """The unfinished block's last lines, raw, for the live area ('' when none)."""
        lines = [*self._done[-_LIVE_LINES:], self._line] if self._line else self._done
        return "\n".join(lines[-_LIVE_LINES:])
