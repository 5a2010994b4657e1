"""Where `read`, `write` and `edit` find a file's bytes: the local disk, or an editor's.

Owns the one seam between those tools and the file system they read and change: `Files`,
and `FILES`, the files of the call being run. None (the default) is the local disk, read and
written as the tools always have. An editor that drives bingo over the Agent Client Protocol
and offers its own (`fs/read_text_file`, `fs/write_text_file`) sets `FILES` for the turns of
its session (surfaces.acp), so the model reads the buffer the person sees, unsaved changes
included, and a change lands in the editor, under its undo. A context variable, not a tool
field, because one run's tools serve every session, and the value must follow the call from
the turn's task into the thread the tool's file work runs in (`asyncio.to_thread` copies the
context). It does not decide whether a call may run (the gate does) nor what a tool does
with the bytes.

Whichever gives the bytes, a tool checks the file the one way first (`kernel.files`: a
regular file, not of /proc or /sys; for a change, not read-only, not too large): an editor
that declines a file (`Declined`) leaves it to the disk, read and written by the same path a
run without an editor takes, never by a shortcut around its checks (ADR-0026).
"""

from __future__ import annotations

from contextvars import ContextVar
from pathlib import Path
from typing import Protocol

__all__ = ["FILES", "Declined", "Files"]


class Declined(Exception):
    """The editor will not give or take this file (outside its project, say): the tool reads
    or writes it on the disk, as it would without an editor."""


class Files(Protocol):
    """A file system the tools read and write whole files through. Called from the worker
    thread a tool's file work runs in, never on the event loop."""

    def read(self, path: Path) -> bytes:
        """The bytes of the file at `path` (absolute).

        Raises:
            FileNotFoundError: there is no such file.
            Declined: the editor leaves this file to the disk.
            OSError: it cannot be read (the text says why).
        """
        ...

    def write(self, path: Path, data: bytes) -> None:
        """Make the file at `path` (absolute) hold `data`, creating it if it is absent.

        Raises:
            Declined: the editor leaves this file to the disk.
            OSError: it cannot be written (the text says why).
        """
        ...


FILES: ContextVar[Files | None] = ContextVar("bingo_files", default=None)
"""The files the running call reads and writes; None is the local disk."""
