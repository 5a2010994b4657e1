"""The session store: every session's frames, kept durably under `~/.bingo/data/`.

Stores do not cross the plugin wire: an append is the hottest write path, and its lock
semantics must survive process death, so this package is in-process only.
"""

from __future__ import annotations

from ._continue import continue_session, load_session
from .session import SessionInfo, SessionStore, new_session_id

__all__ = ["SessionInfo", "SessionStore", "continue_session", "load_session", "new_session_id"]
