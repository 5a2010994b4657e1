"""Writing a file so that a reader, or a crash, sees the old bytes or the new ones and never
half of either: the one way bingo replaces a file it keeps (the trust record, settings it
writes for the person). It does not lock: a caller that merges with what is there holds its
own lock around the read and the write.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["write_atomic"]


def write_atomic(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace `path` with `data`: a temporary file in the same directory, fsync, rename over
    `path`, fsync the directory (so the rename itself survives a power cut). `mode` sets the
    new file's permission bits; by default a replaced file keeps its own.

    Raises:
        OSError: the file or its directory cannot be written.
    """
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o644
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, mode)
        with open(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temp, mode)  # the umask may have narrowed what os.open was asked for
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
