"""The error hierarchy. Every error bingo raises on purpose carries a one-line `message`
(what was wrong) and a `hint` (what to do); `main` prints exactly that, never a traceback.

    BingoError
    ├── UsageError        bad command line                         (exit 2)
    ├── SettingsError     a settings file that is not valid        (exit 2)
    ├── GateError         a question nobody can answer             (a "no" the model hears)
    ├── PluginError       a plugin's call failed, died or was late (answered nothing + notice)
    │   └── PluginUnavailable  the plugin is not running               (answers nothing at once)
    ├── ProviderError     the model could not answer               (exit 1)
    ├── CompactionError   a compaction strategy failed             (history kept as it was)
    └── SessionError      a session cannot be read or found        (exit 1)
"""

from __future__ import annotations

__all__ = [
    "BingoError",
    "CompactionError",
    "GateError",
    "PluginError",
    "PluginUnavailable",
    "ProviderError",
    "SessionError",
    "SettingsError",
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


class PluginError(BingoError):
    """A call across the plugin wire failed. `code` is the JSON-RPC error code."""

    def __init__(self, message: str, hint: str = "", *, code: int = 0) -> None:
        super().__init__(message, hint)
        self.code = code


class PluginUnavailable(PluginError):
    """The plugin is not running (dead, within its backoff, or refused), so it was not asked:
    its sources answer nothing at once. Its stop already raised its own notice."""


class ProviderError(BingoError):
    """The model provider failed to answer."""


class CompactionError(BingoError):
    """A compaction strategy failed; the history stays as it was."""


class SessionError(BingoError):
    """A session cannot be found or read."""
