"""What one `/sync` batch means for the rooms: member events (in order with the messages,
the state before the timeline first) judged by each room, messages from allowed users taken
by their room, and the rest left out: the bot's own, what was said before bingo joined,
edits, notices, files, encrypted events (said once per room), senders not allowed (one
log line each).

It neither polls (`_serve`) nor runs a message (`_worker`).
"""

from __future__ import annotations

import logging
import time

from ...wire import Json, Notice, is_array, is_object
from .._escape import escape
from ._worker import Readers, Room

__all__ = ["handle"]

_log = logging.getLogger(__name__)

_HISTORY_SLACK_MS = 500
"""How much older than bingo's join a message may look and still be taken as said after it
(the homeserver counts `age` when it answers the sync, bingo when the answer arrives)."""


def _before(event: dict[str, Json], joined_at: float | None) -> bool:
    """True when `event` was sent before bingo joined its room (history, not a message)."""
    if joined_at is None:
        return False
    unsigned = event.get("unsigned")
    age = unsigned.get("age") if is_object(unsigned) else None
    if not isinstance(age, int) or isinstance(age, bool):
        return False
    return age > (time.monotonic() - joined_at) * 1000 + _HISTORY_SLACK_MS


def _body(event: dict[str, Json]) -> str | None:
    """The text of a message event a person typed (not an edit, a notice or a file)."""
    content = event.get("content")
    if not is_object(content) or content.get("msgtype") != "m.text":
        return None
    relates = content.get("m.relates_to")
    if is_object(relates) and relates.get("rel_type") == "m.replace":
        return None
    body = content.get("body")
    if not isinstance(body, str):
        return None
    reply = content.get("m.relates_to")
    if is_object(reply) and is_object(reply.get("m.in_reply_to")):
        # A reply's body starts with the quoted message ("> <@who:host> text"), then a blank line.
        lines = body.split("\n")
        while lines and lines[0].startswith(">"):
            lines.pop(0)
        body = "\n".join(lines)
    return body.strip() or None


def _membership(event: dict[str, Json], members: set[str]) -> set[str] | None:
    """Who is joined after `event`, when it is a member event (None when it is not)."""
    if event.get("type") != "m.room.member":
        return None
    user, content = event.get("state_key"), event.get("content")
    if not isinstance(user, str) or not is_object(content):
        return None
    return members | {user} if content.get("membership") == "join" else members - {user}


def handle(batch: dict[str, Json], rooms: dict[str, Room], readers: Readers) -> None:
    allowed, me = readers.allowed, readers.me
    joined = batch.get("rooms")
    joined = joined.get("join") if is_object(joined) else None
    if not is_object(joined):
        return
    for room_id, room_data in joined.items():
        room = rooms.get(room_id)
        timeline = room_data.get("timeline") if is_object(room_data) else None
        events = timeline.get("events") if is_object(timeline) else None
        if room is None or not is_array(events):
            continue
        # The state before the timeline (a gap's), then the timeline in order: a member who
        # joins before a message is there when it is answered.
        state = room_data.get("state") if is_object(room_data) else None
        before = state.get("events") if is_object(state) else None
        for event in before if is_array(before) else []:
            members = _membership(event, room.members) if is_object(event) else None
            if members is not None:
                room.judge(members, readers)
        if is_object(timeline) and timeline.get("limited") is True and room.joined_at is None:
            _log.warning("%s: more messages came than one sync holds; the oldest of them were not read", room_id)
            room.surface.notice(
                Notice(
                    source="bingo",
                    message="more messages came while bingo was away than it reads at once: the oldest were not read",
                    level="warning",
                )
            )
        for event in events:
            members = _membership(event, room.members) if is_object(event) else None
            if members is not None:
                room.judge(members, readers)
                continue
            if not is_object(event) or event.get("type") not in ("m.room.message", "m.room.encrypted"):
                continue
            sender = event.get("sender")
            if not isinstance(sender, str) or sender == me or _before(event, room.joined_at):
                continue
            if event.get("type") == "m.room.encrypted":
                if sender in allowed and not room.said_encrypted:
                    room.said_encrypted = True
                    _log.warning("%s is encrypted: bingo cannot read it", room_id)
                    room.surface.notice(
                        Notice(
                            source="bingo",
                            message="this room is encrypted, and bingo reads only unencrypted rooms: use a room without encryption",
                            level="warning",
                        )
                    )
                continue
            if sender not in allowed:
                _log.info(
                    "ignored a message from %s in %s: not in channels.matrix.allowedUsers", escape(sender), room_id
                )
                continue
            body = _body(event)
            if body is not None:
                room.take(sender, body)
