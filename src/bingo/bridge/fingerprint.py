"""The fingerprint of a plugin: a SHA-256 over every byte that can run or decide, with no
skip list (ADR-0016). Every file under the plugin's directory, compiled caches and
dot-directories included; links followed (each directory once, so cycles end), their target
text and their target's contents hashed, and a target outside the project named; every file
the entry names (command, arguments, env values, split at `=` and `:`, after
`${PLUGIN_ROOT}`, resolved by their real path) inside the project, or outside it through
`${PLUGIN_ROOT}`; a directory it names only when reached through `${PLUGIN_ROOT}` and not
holding the plugin's own (a directory named otherwise, `--repository .`, is where the plugin
works, ADR-0033). Nothing is trusted by size or time: past the budget, or with a file that
cannot be read, a plugin has no digest.

A server a `.mcp.json` declares has no directory of its own: what pins it is the code it runs
(ADR-0028). A file its entry names inside the project pins the tree of the directory holding
it (`srv/main.py` pins `srv/`, and with it the `srv/helper.py` it imports); a file directly in
the project's root pins itself and the root's files of its suffix, not the root's directories;
a directory its entry names is where it works (`/project/data`, `--repository .`), not code,
and is not pinned.

The same walk without contents gives a `stat` signature, which keys the declaration cache
for a user plugin and is never ground for trust. It does not decide trust (trust.py) or read
the record.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Final

import msgspec

from .discovery import PluginSource, workdir
from .manifest import PLUGIN_ROOT

__all__ = ["Fingerprint", "fingerprint"]

_CONTENT_BUDGET: Final = 512 * 1024 * 1024
"""Bytes of contents hashed per plugin: far past any plugin's own code (a 50 MB
`node_modules/` hashes in well under a second, ADR-0016); past it, the plugin has no digest."""
_ENTRY_BUDGET: Final = 200_000
"""Files, links and directories walked per plugin, for the same reason."""
_SHORT: Final = 16
"""Hex digits of a path's own digest in `Fingerprint.files`: enough to tell that a file
changed (which is all they are for), not a ground for trust."""


class Fingerprint(msgspec.Struct, frozen=True):
    """A plugin's digest (hex SHA-256), or None with `problem` saying why it has none;
    `outside` names each link (or entry path) that leads out of the project. `files` is a
    short digest of what each path contributed (`./main.py`, `entry:srv/helper.py`), so that
    trust can say which file changed; it decides nothing (the whole `digest` does)."""

    digest: str | None
    problem: str | None = None
    outside: tuple[str, ...] = ()
    files: tuple[tuple[str, str], ...] = ()


class _OverBudget(Exception):
    """The walk passed a budget: the plugin cannot be pinned."""


def _real(path: str) -> str:
    return os.path.realpath(path)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _hash_file(path: str) -> str:
    try:
        # O_NONBLOCK: a file swapped for a FIFO since it was looked at must not hang us.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with open(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                return "not-a-file"
            return hashlib.file_digest(file, "sha256").hexdigest()
    except OSError as exc:
        return f"unreadable:{exc.errno}"


class _Walk:
    """One walk of a plugin: records in the order met, links followed once each. With
    `contents`, each file contributes its SHA-256 (a fingerprint); without, its inode, size,
    modification and change times (a signature: cheap, and no ground for trust)."""

    def __init__(self, within: str, *, contents: bool = True) -> None:
        self.within = within
        self.contents = contents
        self.records: list[str] = []
        self.hashing: list[tuple[int, str]] = []
        """(index in records, path) of each file whose contents are still to be hashed."""
        self.outside: list[str] = []
        self.unreadable: list[str] = []
        self.bytes_left = _CONTENT_BUDGET
        self.entries_left = _ENTRY_BUDGET
        self.seen: set[tuple[int, int]] = set()

    def _count(self) -> None:
        self.entries_left -= 1
        if self.entries_left < 0:
            raise _OverBudget(f"more than {_ENTRY_BUDGET:,} files")

    def _file(self, label: str, path: str, info: os.stat_result) -> None:
        executable = "x" if info.st_mode & 0o111 else "-"
        head = f"file\0{label}\0{executable}\0"
        if not self.contents:
            self.records.append(f"{head}{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}")
            return
        if info.st_size > self.bytes_left:
            raise _OverBudget(f"more than {_CONTENT_BUDGET // (1024 * 1024)} MiB")
        self.bytes_left -= info.st_size
        self.hashing.append((len(self.records), path))
        self.records.append(head)

    def hash_contents(self) -> None:
        """Hash every file the walk met into its record."""
        if not self.hashing:
            return
        # One thread: a pool of four was slower on a quiet machine (each small file is a few
        # system calls between which the threads queue for the GIL), faster only when the
        # other core was busy (ADR-0016).
        digests = [_hash_file(path) for _, path in self.hashing]
        for (index, path), digest in zip(self.hashing, digests):
            if digest.startswith("unreadable:"):
                self.unreadable.append(path)
            self.records[index] += digest
        self.hashing.clear()

    def node(self, label: str, path: str) -> None:
        """Record `path` (a file, link or directory) under `label`, and what is below it."""
        stack = [(label, path)]
        while stack:
            label, path = stack.pop()
            self._count()
            try:
                info = os.lstat(path)
            except OSError as exc:
                self.records.append(f"gone\0{label}\0{exc.errno}")
                continue
            if stat.S_ISLNK(info.st_mode):
                try:
                    target = os.readlink(path)
                except OSError:
                    target = ""
                real = _real(path)
                if not _inside(real, self.within):
                    self.outside.append(f"{label} -> {real}")
                self.records.append(f"link\0{label}\0{target}")
                try:
                    info = os.stat(path)
                except OSError:
                    self.records.append(f"dangling\0{label}")
                    continue
            if stat.S_ISDIR(info.st_mode):
                if (info.st_dev, info.st_ino) in self.seen:
                    self.records.append(f"again\0{label}")
                    continue
                self.seen.add((info.st_dev, info.st_ino))
                try:
                    names = sorted(os.listdir(path))
                except OSError as exc:
                    self.unreadable.append(path)
                    self.records.append(f"dir\0{label}\0unreadable:{exc.errno}")
                    continue
                if not self.contents:
                    # A signature keys the declaration cache, which guards nothing: the
                    # compiled caches a Python plugin writes on its first start are no change.
                    names = [name for name in names if name != "__pycache__"]
                self.records.append(f"dir\0{label}\0{len(names)}")
                # Reversed onto the stack, so entries are met in sorted order.
                stack.extend((f"{label}/{name}", os.path.join(path, name)) for name in reversed(names))
            elif stat.S_ISREG(info.st_mode):
                self._file(label, path, info)
            else:
                # A FIFO, socket or device is never opened: its kind is what it contributes.
                self.records.append(f"special\0{label}\0{stat.S_IFMT(info.st_mode)}")

    def files(self) -> tuple[tuple[str, str], ...]:
        """Each path the walk met (its label) with a short digest of what it contributed: a
        file's contents and executable bit, a link's target, a directory's count."""
        by_label: dict[str, list[str]] = {}
        for record in self.records:
            by_label.setdefault(record.split("\0", 2)[1], []).append(record)
        return tuple(
            (label, hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:_SHORT])
            for label, parts in sorted(by_label.items())
        )

    def digest(self) -> str:
        digest = hashlib.sha256()
        for record in self.records:
            # Length-prefixed, so no file name can make two different trees hash alike.
            data = record.encode("utf-8", "surrogateescape")
            digest.update(len(data).to_bytes(8, "big") + data)
        return digest.hexdigest()


def _entry_words(source: PluginSource) -> list[tuple[str, bool]]:
    """Each path-like piece of the manifest's entry, `${PLUGIN_ROOT}` expanded, and whether
    it was written relative to the plugin's directory. A word is split at `=` and at the
    path-list separator, so `--script=${PLUGIN_ROOT}/x.py` and `PYTHONPATH=a:b` name files."""
    manifest = source.manifest
    if manifest is None:
        return []
    root = str(source.root)
    entry = manifest.entry
    found: list[tuple[str, bool]] = []
    for word in (entry.command, *entry.args, *entry.env.values()):
        via_root = PLUGIN_ROOT in word
        expanded = word.replace(PLUGIN_ROOT, root)
        for piece in expanded.replace("=", os.pathsep).split(os.pathsep):
            if piece:
                found.append((piece, via_root))
    return found


def _server_code(real: str, within: str) -> list[str]:
    """What a `.mcp.json` server's entry word `real` (a real path inside the project `within`)
    pins: the directory holding a file, whole; for a file directly in the project's root or its
    `.bingo/`, the file and that directory's other files of its suffix; nothing for a directory
    (the server's place of work, not its code)."""
    if os.path.isdir(real):
        return []
    holder = os.path.dirname(real)
    # `.bingo/` holds what bingo writes itself (settings.local.json, its .gitignore): a script
    # kept there pins as one in the root does, so that bingo's own writes keep it trusted.
    if holder not in (within, os.path.join(within, ".bingo")):
        return [holder]
    suffix = os.path.splitext(real)[1]
    if not suffix:
        return [real]
    try:
        names = sorted(os.listdir(holder))
    except OSError:
        return [real]
    siblings = [os.path.join(holder, name) for name in names if name.endswith(suffix) and not name.startswith(".")]
    return [real, *(path for path in siblings if path != real and not os.path.isdir(path))]


def _worksite(real: str, via_root: bool, plugin_root: str) -> bool:
    """Whether a plugin's entry word `real` names a directory it is told to work in, not code:
    a directory not reached through `${PLUGIN_ROOT}` (`--repository .`), or one that holds the
    plugin's own directory (the project, `.bingo/`), however reached. A directory reached from
    the plugin's own (`PYTHONPATH=${PLUGIN_ROOT}/../lib`) is code, and pinned (ADR-0033)."""
    return os.path.isdir(real) and (not via_root or _inside(plugin_root, real))


def fingerprint(source: PluginSource, cwd: Path, *, contents: bool = True) -> Fingerprint:
    """The digest of a plugin as this module's docstring says. `cwd` is where the plugin
    will run: an entry argument relative to it (`main.py`) names a file there. Without
    `contents`, the same walk gives a signature of what it met by `stat` alone: what the
    declaration cache keys a user plugin by, never what trust pins. A server a `.mcp.json`
    declares has no directory of its own (its root is the project's): what its entry names
    is pinned as `_server_code` says."""
    within = _real(str(source.base))
    walk = _Walk(within, contents=contents)
    try:
        own = source.declared_in is None
        if own:
            walk.node(".", str(source.root))
        plugin_root = _real(str(source.root)) if own else ""
        named: set[str] = set()
        # A `.mcp.json` server runs in the project's root, wherever bingo was started (its
        # process's working directory is `workdir`'s), so its relative words are read there.
        where = str(workdir(source, cwd))
        for piece, via_root in _entry_words(source):
            path = piece if os.path.isabs(piece) else os.path.join(where, piece)
            real = _real(path)
            if real in named or (own and _inside(real, plugin_root)) or not os.path.lexists(real):
                continue
            if _inside(real, within) and not own:
                named.add(real)
                for code in _server_code(real, within):
                    if code not in named or code == real:
                        named.add(code)
                        walk.node(f"entry:{os.path.relpath(code, within)}", code)
            elif _worksite(real, via_root, plugin_root):
                continue
            elif _inside(real, within):
                named.add(real)
                walk.node(f"entry:{os.path.relpath(real, within)}", real)
            elif via_root:
                # Reached from the plugin's directory, out of the project: hashed, and named.
                named.add(real)
                walk.outside.append(f"{piece} -> {real}")
                walk.node(f"entry:{real}", real)
        walk.hash_contents()
    except _OverBudget as exc:
        return Fingerprint(digest=None, problem=f"it holds {exc} to hash", outside=tuple(walk.outside))
    if walk.unreadable:
        return Fingerprint(digest=None, problem=f"{walk.unreadable[0]} cannot be read", outside=tuple(walk.outside))
    return Fingerprint(digest=walk.digest(), outside=tuple(walk.outside), files=walk.files())
