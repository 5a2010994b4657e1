"""Writing a file so that a reader, or a crash, sees the old bytes or the new ones and never
half of either: the one way bingo writes a file (a tool's `write` and `edit`, the settings an
"always" saves, the trust record, caches, an editor's declined files). ADR-0026.

Owns the temporary file and what may stand in the way of it: the temporary is created
exclusively (O_CREAT|O_EXCL|O_NOFOLLOW) under a name nobody can predict, in the target's
own directory opened once, so a link a repository planted at a name bingo once used (or at
any name) is never written through, and only the file bingo created is renamed. A link at
the target itself is refused, and with `within` so is a target whose directory, links
followed, is not inside that root. It does not lock: a caller that merges with what is
there holds its own lock around the read and the write.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

from .files import inside

__all__ = ["write_atomic"]

_NEW_MODE = 0o666
"""What a new file is created with: the umask takes away what the person's says (0644 under
022, 0600 under 077), as for any file a program creates."""


def write_atomic(path: Path, data: bytes, *, within: Path | None = None, mode: int | None = None) -> None:
    """Replace (or create) `path` with `data`: a temporary file created exclusively beside it,
    fsync, rename over `path`, fsync the directory (so the rename survives a power cut). A
    replaced file keeps its permission bits; a new one gets what the umask leaves of 0666.
    With `mode`, the file has exactly those bits, set before a byte is written (a secret's
    file is never readable by others, even for an instant).

    Raises:
        OSError: `path` is a link (ELOOP), its directory is not inside `within` (EXDEV), or
            the file or its directory cannot be written.
    """
    parent = os.path.realpath(path.parent)
    if within is not None and not inside(parent, within):
        raise OSError(errno.EXDEV, f"its directory is {parent}, outside {os.path.realpath(within)}", str(path))
    directory = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        _replace(directory, path.name, data, str(path), mode)
        os.fsync(directory)
    finally:
        os.close(directory)


def _replace(directory: int, name: str, data: bytes, shown: str, wanted: int | None = None) -> None:
    try:
        info = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        mode = None
    else:
        if stat.S_ISLNK(info.st_mode):
            raise OSError(errno.ELOOP, "it is a symbolic link, which bingo does not write through", shown)
        mode = stat.S_IMODE(info.st_mode)
    if wanted is not None:
        mode = wanted
    # Unpredictable and created exclusively: a name planted in advance (a link, a file) makes
    # the open fail rather than be written through; then another name is tried.
    for _ in range(8):
        temp = f".{name}.{secrets.token_hex(8)}.tmp"
        try:
            fd = os.open(
                temp,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                _NEW_MODE if wanted is None else wanted,
                dir_fd=directory,
            )
            break
        except FileExistsError:
            continue
    else:
        raise OSError(errno.EEXIST, "no temporary file could be created beside it", shown)
    try:
        with open(fd, "wb") as file:
            if mode is not None:
                os.fchmod(file.fileno(), mode)  # the descriptor: no name to be swapped under it
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, name, src_dir_fd=directory, dst_dir_fd=directory)
    except BaseException:
        try:
            os.unlink(temp, dir_fd=directory)
        except OSError:
            pass
        raise
