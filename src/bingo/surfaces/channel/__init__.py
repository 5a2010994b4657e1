"""The IM channel surface: `bingo --channel matrix`, bingo as a bot in Matrix rooms
(INTERFACE.md §7b, docs/channels.md). Imported only when a channel runs; httpx, which it
speaks the client-server API with (ADR-0023), is imported when the bot starts."""

from ._homeserver import Homeserver, Refusal
from ._html import view_html
from ._outbox import Outbox, message
from ._room import RoomSurface
from ._serve import ChannelLog, StopCommand, serve_matrix
from ._worker import QUEUE_LIMIT, STOP, MakeRoom

__all__ = [
    "QUEUE_LIMIT",
    "STOP",
    "ChannelLog",
    "Homeserver",
    "MakeRoom",
    "Outbox",
    "Refusal",
    "RoomSurface",
    "StopCommand",
    "message",
    "serve_matrix",
    "view_html",
]
