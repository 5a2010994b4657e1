"""The error hierarchy. Every error bingo raises on purpose carries a one-line `message`
(what was wrong) and a `hint` (what to do); `main` prints exactly that, never a traceback.

    BingoError
    ├── UsageError        bad command line                         (exit 2)
    ├── SettingsError     a settings file that is not valid        (exit 2)
    ├── GateError         a question nobody can answer             (a "no" the model hears)
    ├── TrustError        the trust record cannot be written       (trusted for this run only)
    ├── PluginError       a plugin's call failed, died or was late (answered nothing + notice)
    │   ├── PluginUnavailable  the plugin is not running, so it was not asked (answers nothing at once)
    │   │   └── Unavailable        (bridge/_link.py) dead, within its backoff, or refused
    │   ├── ConnectionClosed   the stream to the plugin ended or cannot be written
    │   │   └── Unread             (endpoint/connection.py) it left too much unread on its stdin
    │   ├── DeadlinePassed     no answer within the method's deadline        -32001
    │   ├── Refused            the receiver refused; the message says why    -32002
    │   ├── Cancelled          the call was cancelled                        -32800
    │   ├── MethodNotFound     the receiver has no such method               -32601
    │   ├── BadParams          a call's params are not of its method's shape -32602
    │   ├── BadAnswer          (endpoint/_message.py) an answer not of its result's shape -32602
    │   └── SpawnError         the plugin's process could not be started  (stopped + notice, backoff)
    │       └── JanitorError       the janitor that starts plugins failed or did not answer
    ├── ProviderError     the model could not answer               (exit 1)
    ├── CompactionError   a compaction strategy failed             (history kept as it was)
    └── SessionError      a session cannot be read or found        (exit 1)

A PluginError's `code` is the JSON-RPC error code it crosses the wire as: each subclass
keeps its own as a class attribute, the same number as `wire.rpc`'s constant of that name
(spelled here because the command line's first import must not load the wire;
tests/unit/kernel/test_errors.py keeps the two equal). The bridge's connection reads it in
its one function from an exception to a wire error, and makes an error a peer answered into
the subclass of its code; a code no subclass has stays on a plain PluginError. Callers tell
the ways of failing apart with `isinstance`, never by comparing codes.
"""

from __future__ import annotations

__all__ = [
    "BadParams",
    "BingoError",
    "Cancelled",
    "CompactionError",
    "ConnectionClosed",
    "DeadlinePassed",
    "GateError",
    "JanitorError",
    "MethodNotFound",
    "PluginError",
    "PluginUnavailable",
    "ProviderError",
    "Refused",
    "SessionError",
    "SettingsError",
    "SpawnError",
    "TrustError",
    "UsageError",
]


class BingoError(Exception):
    """Root of every error bingo raises on purpose."""

    exit_code: int = 1

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def line(self) -> str:
        """The one line a person reads: what was wrong, then what to do."""
        return f"{self.message}: {self.hint}" if self.hint else self.message


class UsageError(BingoError):
    """The command line cannot be understood."""

    exit_code = 2


class SettingsError(BingoError):
    """A settings file is not valid JSON or holds a key of the wrong type."""

    exit_code = 2


class GateError(BingoError):
    """A question was put where nobody can answer it."""


class TrustError(BingoError):
    """The trust record (`trust.json` in the data directory) cannot be written."""


class PluginError(BingoError):
    """A call across the plugin wire failed. `code` is the JSON-RPC error code it crosses the
    wire as: its class's own, or the code a peer answered that no subclass has; 0 when it
    has none (the wire hears it as a refusal in its own words)."""

    code: int = 0

    def __init__(self, message: str, hint: str = "", *, code: int | None = None) -> None:
        super().__init__(message, hint)
        if code is not None:
            self.code = code


class PluginUnavailable(PluginError):
    """The plugin is not running (dead, within its backoff, or refused), so it was not asked:
    its sources answer nothing at once. Its stop already raised its own notice."""


class ConnectionClosed(PluginError):
    """The stream to the plugin ended (it exited, or the host closed it) or cannot be
    written: every call still pending fails with it."""


class DeadlinePassed(PluginError):
    """No answer came within the call's deadline; the call was abandoned."""

    code = -32001  # wire.rpc.DEADLINE


class Refused(PluginError):
    """The receiver refused the call; the message says why."""

    code = -32002  # wire.rpc.REFUSED


class Cancelled(PluginError):
    """The call was cancelled."""

    code = -32800  # wire.rpc.CANCELLED


class MethodNotFound(PluginError):
    """The receiver does not implement the method (a plugin without completion answers this)."""

    code = -32601  # wire.rpc.METHOD_NOT_FOUND


class BadParams(PluginError):
    """A call's params did not have its method's shape."""

    code = -32602  # wire.rpc.INVALID_PARAMS


class SpawnError(PluginError):
    """The plugin's process could not be started (its command cannot be run, or its
    directory is gone): it is stopped with a notice, and backs off as after a death."""


class JanitorError(SpawnError):
    """The janitor that starts plugins (and reaps what they leave) failed, ended, or did not
    answer in time, so the plugin could not be started. The janitor raises it; where an
    OSError still comes out of a spawn, the spawn's caller maps it to SpawnError once."""


class ProviderError(BingoError):
    """The model provider failed to answer."""


class CompactionError(BingoError):
    """A compaction strategy failed; the history stays as it was."""


class SessionError(BingoError):
    """A session cannot be found or read."""
