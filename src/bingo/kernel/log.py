"""bingo's own log, bounded: a file handler that rotates by size during a run, and `cut`,
the one shortening of a foreign value on its way into any log.

Owns the handler behind `<data_dir>/logs/bingo.log`, set aside as `bingo.log.1` each time it
grows past its bound (so a run keeps at most two files, whatever is logged), and the rule
that a value bingo did not write itself (a method name, an id, a bad line's reason, an
exception's words) is kept to its first few KiB with its length said. It does not decide
what is logged, and it does not own a plugin's log (`bridge/process.py`'s PluginLog rotates
itself).

`logging.handlers.RotatingFileHandler` would rotate as well, but importing `logging.handlers`
brings pickle, queue and socket along: more than a start-up that may log nothing should pay
for the few lines below.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

__all__ = ["FOREIGN_MAX", "LOG_BYTES", "QUOTED_MAX", "RECORD_MAX", "SizedFileHandler", "cut", "setup_logging"]

LOG_BYTES = 1_000_000
"""bingo's own log is set aside as `bingo.log.1` whenever it grows past this, during a run:
two files of it at most, room for the records of many runs, and never the disk."""
FOREIGN_MAX = 4 * 1024
"""Characters of a foreign value kept where it is logged: enough to recognise it, small
enough that a flood of them fills no disk (an 8 MiB method name is logged as 4 KiB)."""
QUOTED_MAX = 200
"""Characters of a foreign value quoted inside a notice: a person reads a line, not a page
(a whole notice is cut at FOREIGN_MAX all the same)."""
RECORD_MAX = 64 * 1024
"""Characters of one log record, as a backstop for a site that logs a foreign value uncut
(a long traceback still fits)."""


def cut(value: str | bytes, limit: int = FOREIGN_MAX) -> str:
    """`value` as text for a log: whole when short, else its first `limit` characters and
    how long it was, `xxx… (8388608 bytes, cut)` (bytes as UTF-8, for text)."""
    if isinstance(value, bytes):
        if len(value) <= limit:
            return value.decode("utf-8", "replace")
        return f"{value[:limit].decode('utf-8', 'replace')}… ({len(value)} bytes, cut)"
    if len(value) <= limit:
        return value
    size = len(value.encode("utf-8", "surrogatepass"))
    return f"{value[:limit]}… ({size} bytes, cut)"


class SizedFileHandler(logging.FileHandler):
    """A FileHandler (UTF-8, opened at the first record) that, once its file is past
    `max_bytes` after a record, renames it to `<name>.1` (replacing the one before) and
    starts a new file at the next record. Each record is cut to RECORD_MAX, so the two files
    together never hold much more than twice `max_bytes`."""

    def __init__(self, path: Path, *, max_bytes: int) -> None:
        super().__init__(path, encoding="utf-8", delay=True)
        self._max_bytes = max_bytes

    def format(self, record: logging.LogRecord) -> str:
        return cut(super().format(record), RECORD_MAX)

    def emit(self, record: logging.LogRecord) -> None:
        super().emit(record)
        stream = self.stream
        if stream is None:
            return
        try:
            # The file's size, not this handler's count: another run may append to it too.
            if os.fstat(stream.fileno()).st_size > self._max_bytes:
                self.stream = None  # reopened by the next record
                stream.close()
                os.replace(self.baseFilename, self.baseFilename + ".1")
        except OSError:
            pass  # it cannot be set aside: appending to it is still right


def setup_logging(data_dir: Path) -> None:
    """bingo's own log for this process, `<data_dir>/logs/bingo.log`, opened at the first
    record and set aside as `bingo.log.1` each time it passes LOG_BYTES (one old file kept)."""
    logs = data_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    handler = SizedFileHandler(logs / "bingo.log", max_bytes=LOG_BYTES)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
