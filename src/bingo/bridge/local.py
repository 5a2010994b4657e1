"""bingo's own writes to a project's `.bingo/settings.local.json`: what an "always" answer
saves (a rule, a host), merged into what the file holds, written atomically, never through a
link a repository planted, and kept trusted as written (`trust.keep_written`, INTERFACE.md
§1); and, when bingo creates the file, the `.gitignore` line that keeps this machine's
settings out of the repository (INTERFACE.md §2, ADR-0033)."""

from __future__ import annotations

import errno
import json
from pathlib import Path

from ..kernel.atomic import write_atomic
from ..kernel.errors import TrustError
from ..kernel.files import open_regular
from ..kernel.settings import left_out_of
from ..wire import MAX_DEPTH, Json, Notice, is_array, is_object, too_deep
from .trust import keep_written

__all__ = ["save_local"]

_GITIGNORE_MAX = 1_000_000
"""Bytes of a `.gitignore` bingo reads to add a line to it; a larger one is left alone."""


def _read_own(path: Path, limit: int | None = None) -> bytes | None:
    """The bytes of a file bingo is about to rewrite, or None when there is none: read as the
    file itself, never through a link (whose target would be merged into the project's file,
    and kept trusted as bingo's own writing); with `limit`, refused past that many bytes.

    Raises:
        OSError: it is a link, not a regular file, or cannot be read.
        ValueError: the file is larger than `limit`.
    """
    try:
        fd, info = open_regular(path, follow=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "it is a symbolic link, which bingo does not write through", str(path)) from None
        raise
    with open(fd, "rb") as file:
        if limit is None:
            return file.read()
        if info.st_size > limit:
            raise ValueError(f"it is larger than the {limit:,} bytes bingo reads of one")
        data = file.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"it is larger than the {limit:,} bytes bingo reads of one")
    return data


def _ignoring(before: bytes | None, name: str) -> bytes | None:
    """The `.gitignore` that names `name`, given the one there (`before`, None when there is
    none); None when it names it already (as `name`, `/name`, or a `!` line: the person's
    own decision about it)."""
    if before is not None:
        for line in before.decode("utf-8", errors="replace").splitlines():
            if line.strip().lstrip("!").lstrip("/") == name:
                return None
        return before + (b"\n" if before and not before.endswith(b"\n") else b"") + name.encode() + b"\n"
    return f"# This machine's own settings (bingo): not for the repository.\n{name}\n".encode()


def _keep_out_of_git(path: Path, project: Path) -> Notice | None:
    """`settings.local.json` is this machine's: when bingo has just created it, `.gitignore`
    beside it names it, created with that line, or the line appended to one that does not
    name it yet (never rewritten otherwise). It is not what trust pins: git reads it, bingo
    never does (ADR-0033). A notice when it could not."""
    ignore = path.parent / ".gitignore"
    try:
        after = _ignoring(_read_own(ignore, _GITIGNORE_MAX), path.name)
        if after is not None:
            write_atomic(ignore, after, within=project)
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        return Notice(
            source="bingo",
            message=f"{path.name} is not named in {ignore}, so git may commit it: {why}; add the line {path.name} to it",
            level="warning",
        )
    return None


def save_local(project: Path, data_dir: Path, keys: tuple[str, ...], value: str, what: str) -> list[Notice]:
    """Append `value` to the list at `keys` in `<project>/.bingo/settings.local.json` (`what`,
    one line, names it for the person); the notices that say what became of it."""
    path = project / ".bingo" / "settings.local.json"
    said: list[Notice] = []
    try:
        before = _read_own(path)
        if before is not None and too_deep(before):
            raise ValueError(f"nested too deeply (more than {MAX_DEPTH} levels)")
        data: Json = json.loads(before) if before is not None else {}
        if not is_object(data):
            raise ValueError("not a JSON object")
        # What the file gave beyond deny and ask before bingo touched it: the person never saw it.
        untrusted = before is not None and bool(left_out_of(data))
        here: Json = data
        for key in keys[:-1]:
            here = here.setdefault(key, {}) if is_object(here) else None
        items: Json = here.setdefault(keys[-1], []) if is_object(here) else None
        if not is_array(items):
            raise ValueError(f"{'.'.join(keys)} is not a list")
        if value not in items:
            items.append(value)
        after = (json.dumps(data, indent=2) + "\n").encode("utf-8")
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, after, within=project)  # never through a link a repository planted
        if before is None:
            ignored = _keep_out_of_git(path, project)
            if ignored is not None:
                said.append(ignored)
        if not keep_written(data_dir, project, path.name, before, after, untrusted_keys=untrusted):
            said.append(
                Notice(
                    source="bingo",
                    message=f"{what} is saved in {path}, which holds settings this project's trust does not cover: it applies from the next run once you run bingo --trust in {project}",
                    level="warning",
                )
            )
        else:
            said.append(Notice(source="bingo", message=f"allowed {what} from now on: saved in {path}"))
    except OSError as exc:
        said.append(
            Notice(
                source="bingo",
                message=f"{what} is allowed for this run only: cannot save it in {path} ({exc.strerror or exc})",
                level="warning",
            )
        )
    except (ValueError, RecursionError, TrustError) as exc:
        said.append(
            Notice(
                source="bingo",
                message=f"{what} is allowed for this run only: cannot save it in {path} ({exc})",
                level="warning",
            )
        )
    return said
