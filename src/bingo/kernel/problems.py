"""Problems and their fixes: the `Problem` record, and the refusals the kernel itself makes.

Owns the shape of one entry of the table of what a contributor (a plugin, above all) can get
wrong, in the words bingo says it in, with the one sentence that says how to put it right
(`Problem`), and the entries for what the registry refuses whoever the contributor is: a
name that is bingo's own, a reserved service key, a hook that names no valid site and
points. The bridge's table (`bridge/_problems.py`) adds what only a plugin process can get
wrong and is the one the checker reads whole. It does no I/O and decides nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["HOOK_REFUSED", "KERNEL_PROBLEMS", "RESERVED_NAME", "RESERVED_SERVICE", "Problem"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing a contributor can get wrong: `what` was wrong and the `fix`, each with
    named blanks (`str.format` fields); `words` fills them and joins the two as the one line
    bingo says, `said` is `what` alone (what a fault says before where to look)."""

    key: str
    what: str
    fix: str
    join: str = ": "
    """Between `what` and `fix` (`: `, `; `, or ` (` for a fix said in parentheses)."""

    def words(self, **fields: object) -> str:
        """The line: `what`, then the fix, every blank filled from `fields`."""
        what, fix = self.what.format(**fields), self.fix.format(**fields)
        return f"{what}{self.join}{fix}{')' if self.join.endswith('(') else ''}"

    def said(self, **fields: object) -> str:
        """What was wrong alone, filled in: a run-time fault says it and then where to look
        (the log), the check says it with the fix (`words`)."""
        return self.what.format(**fields)


RESERVED_NAME: Final = Problem(
    "reserved-name",
    "{kind} {shown!r} refused: {shown} is bingo's own {kind}",
    "rename it",
    join="; ",
)
RESERVED_SERVICE: Final = Problem(
    "reserved-service",
    "service {key!r} refused: keys starting {prefix!r} are reserved for the host",
    "choose a key of your own (e.g. <plugin>.<name>)",
)
HOOK_REFUSED: Final = Problem(
    "hook-refused",
    "hook {name} refused: {problem}",
    'write one site and its points, e.g. {{"site": "tool", "points": ["before"]}}',
)

KERNEL_PROBLEMS: Final[tuple[Problem, ...]] = (RESERVED_NAME, RESERVED_SERVICE, HOOK_REFUSED)
"""The kernel's own refusals, in the order a check meets them."""
