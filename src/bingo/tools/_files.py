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
"""

from __future__ import annotations

from contextvars import ContextVar
from pathlib import Path
from typing import Protocol

__all__ = ["FILES", "Files"]


class Files(Protocol):
    """A file system the tools read and write whole files through. Called from the worker
    thread a tool's file work runs in, never on the event loop."""

    def read(self, path: Path) -> bytes:
        """The bytes of the file at `path` (absolute).

        Raises:
            FileNotFoundError: there is no such file.
            OSError: it cannot be read (the text says why).
        """
        ...

    def write(self, path: Path, data: bytes) -> None:
        """Make the file at `path` (absolute) hold `data`, creating it if it is absent.

        Raises:
            OSError: it cannot be written (the text says why).
        """
        ...


FILES: ContextVar[Files | None] = ContextVar("bingo_files", default=None)
"""The files the running call reads and writes; None is the local disk."""
