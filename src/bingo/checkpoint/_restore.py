"""Putting a project's recorded files back as a checkpoint has them.

Owns the plan (`plan`: from what the project holds now to what the checkpoint recorded, the
paths to create, change and remove, and those it cannot put back and why) and carrying it
out (`apply`): removals first, deepest first, then every file written whole beside its
place and renamed over it (so each file is, at every instant, as it was or as it will be),
its mode set, a link made as a link. Nothing is written through a link: a directory on the
way that is a link is refused, so a restore never leaves the project. What was not recorded
(ignored, over the size bound, unreadable, `.git`, the project's `.bingo/`) is left as it is.
It does not look at the project (`_scan`) nor keep bytes (`_store`).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..kernel.atomic import write_atomic
from ._scan import Entry

__all__ = ["Plan", "apply", "plan"]

_RECORDED = ("file", "link")


@dataclass(slots=True)
class Plan:
    """What restoring a checkpoint does: paths (relative, "/"-separated, sorted) created,
    changed and removed, and those it leaves and why."""

    create: list[str] = field(default_factory=lambda: [])
    change: list[str] = field(default_factory=lambda: [])
    remove: list[str] = field(default_factory=lambda: [])
    left: list[tuple[str, str]] = field(default_factory=lambda: [])
    target: dict[str, Entry] = field(default_factory=lambda: {})

    def empty(self) -> bool:
        return not (self.create or self.change or self.remove)


def _same(a: Entry, b: Entry) -> bool:
    return a.kind == b.kind and a.ref == b.ref and (a.kind == "link" or a.mode == b.mode)


def plan(now: dict[str, Entry], then: dict[str, Entry]) -> Plan:
    """From `now` (a fresh look at the project) to `then` (a checkpoint's)."""
    made = Plan(target=then)
    for path, entry in then.items():
        if entry.kind not in _RECORDED:
            made.left.append((path, "over checkpoints.maxFileBytes" if entry.kind == "big" else "it could not be read"))
            continue
        current = now.get(path)
        if current is None:
            made.create.append(path)
        elif current.kind not in _RECORDED:
            made.left.append((path, "it is not recorded now (over checkpoints.maxFileBytes, or unreadable)"))
        elif not _same(current, entry):
            made.change.append(path)
    for path, entry in now.items():
        if path not in then and entry.kind in _RECORDED:
            made.remove.append(path)
    made.create.sort()
    made.change.sort()
    made.remove.sort()
    return made


def apply(root: Path, made: Plan, get: Callable[[str], bytes]) -> list[tuple[str, str]]:
    """Carry out `made` under `root`; each path that could not be put back, and why (the
    rest are)."""
    failed: list[tuple[str, str]] = []
    base = os.path.realpath(root)
    for path in sorted(made.remove, key=lambda p: (-p.count("/"), p)):
        full = os.path.join(base, path)
        try:
            if _safe_parent(base, path) is None:
                raise OSError("a directory on its way is a link or not a directory")
            os.unlink(full)
        except FileNotFoundError:
            pass
        except OSError as exc:
            failed.append((path, _why(exc)))
            continue
        _prune_empty(base, path, made.target)
    for path in [*made.change, *made.create]:
        entry = made.target[path]
        try:
            parent = _safe_parent(base, path, make=True)
            if parent is None:
                raise OSError("a directory on its way is a link or a file that is not recorded")
            full = os.path.join(base, path)
            _clear_way(full, path, made)
            if entry.kind == "link":
                temp = full + ".bingo-rewind"
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(temp)
                os.symlink(entry.ref, temp)
                os.replace(temp, full)
            else:
                write_atomic(Path(full), get(entry.ref), within=root)
                os.chmod(full, entry.mode)  # write_atomic made it a regular file, not a link
        except OSError as exc:
            failed.append((path, _why(exc)))
    return failed


def _why(exc: OSError) -> str:
    return str(exc.strerror or exc)


def _safe_parent(base: str, path: str, *, make: bool = False) -> str | None:
    """The directory `path` is in, every step of the way a real directory (made when `make`
    and absent); None when one is a link or a file."""
    here = base
    for part in path.split("/")[:-1]:
        here = os.path.join(here, part)
        try:
            info = os.lstat(here)
        except FileNotFoundError:
            if not make:
                return None
            os.mkdir(here)
            continue
        if not stat.S_ISDIR(info.st_mode):
            return None
    return here


def _clear_way(full: str, path: str, made: Plan) -> None:
    """A file is to stand where a directory is now: the directory goes when it is empty of
    everything (its recorded files were removed already); otherwise the file is refused."""
    try:
        info = os.lstat(full)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode) and made.target[path].kind == "file":
        os.unlink(full)  # write_atomic writes through no link: the link the turn made goes
    elif stat.S_ISDIR(info.st_mode):
        _remove_empty_tree(full)
        if os.path.lexists(full):
            raise OSError(f"{path} is a directory holding files not recorded")


def _remove_empty_tree(top: str) -> None:
    for directory, _dirs, _files in os.walk(top, topdown=False):
        with contextlib.suppress(OSError):
            os.rmdir(directory)


def _prune_empty(base: str, path: str, target: dict[str, Entry]) -> None:
    """Remove the directories a removed file leaves empty, unless the checkpoint has a file
    below them (then they are wanted)."""
    parts = path.split("/")[:-1]
    while parts:
        prefix = "/".join(parts) + "/"
        if any(p.startswith(prefix) for p in target):
            return
        try:
            os.rmdir(os.path.join(base, *parts))
        except OSError:
            return
        parts.pop()
