"""Checkpoints of a project's files before each prompt's turn, and restoring them
(INTERFACE.md §10, ADR-0044).

A checkpoint records every file under the project that git would not ignore (`_ignore`),
its bytes by digest and its mode, links as links (`_scan`), each distinct content kept once
under `~/.bingo/data/checkpoints/` within `checkpoints.maxBytes` (`_store`); a restore puts
the recorded files back, creating, changing and removing (`_restore`). `Checkpoints` is the
one door a run uses. The conversation's part of a rewind is the kernel's (`RewindFrame`)
and the run's; the command is `run/_rewind.py`.
"""

from __future__ import annotations

from ._checkpoints import MAX_BYTES, MAX_FILE_BYTES, Checkpoints, Looked, named
from ._guard import Journal
from ._restore import Plan
from ._scan import Entry, Scan
from ._store import Point

__all__ = ["MAX_BYTES", "MAX_FILE_BYTES", "Checkpoints", "Entry", "Journal", "Looked", "Plan", "Point", "Scan", "named"]
