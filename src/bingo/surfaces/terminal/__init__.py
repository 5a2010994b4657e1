"""The terminal surface: a person at the keyboard (`bingo` or `bingo "PROMPT"` on a terminal).

Built on prompt_toolkit (input, history, completion) and rich (drawing), which are imported
only when this package is, so `--print` never pays for them. `TerminalSurface` is what the
run draws on and asks through; `interact` is the keyboard loop that drives the run;
`ResultCommand` and `ResumeCommand` are its own commands; `Opening` is what the banner names (and the session a
recap is drawn from).
"""

from ._commands import ResultCommand, ResumeCommand, SessionKeeper
from ._loop import interact
from ._opening import Opening
from ._start import StartAsker, choose_session
from ._surface import TerminalSurface

__all__ = [
    "Opening",
    "ResultCommand",
    "ResumeCommand",
    "SessionKeeper",
    "StartAsker",
    "TerminalSurface",
    "choose_session",
    "interact",
]
