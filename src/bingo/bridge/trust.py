"""Trust in what a project brings: nothing a repository ships runs or decides before the
person has said so, and again only as it was when they said it (ADR-0016).

A project brings its plugins (`<project>/.bingo/plugins/`), its two settings files
(`.bingo/settings.json`, `.bingo/settings.local.json`) and `.mcp.json`. Each is one *item*
with a SHA-256 digest (`Item`); the project is trusted when every item that would change what
bingo does has the digest `<data_dir>/trust.json` records for it. One trust for the whole
project: until it holds, none of the project's plugins runs (a user plugin of the same name
runs instead: an untrusted plugin hides nothing) and its settings give only what tightens
(`permissions.deny` and `.ask`, `kernel/settings.py`).

The digest of a plugin (`fingerprint`) covers every byte that can run or decide, with no
skip list: every file under its directory (compiled caches and dot-directories included),
links followed and their targets hashed (a target outside the project is named), and every
file or directory the entry names (command, arguments, env values, after `${PLUGIN_ROOT}`,
resolved by their real path) inside the project, or outside it through `${PLUGIN_ROOT}`.
Nothing is ever trusted by size or time: a plugin past the hashing budget, or a file that
cannot be read, has no digest and cannot be trusted.

Owns the fingerprint, the record (written atomically under a lock), the verdict for a run
(`TrustState`), which plugins a run starts (`admitted`), bingo's own writes staying trusted
(`keep_written`), and the words: the notice, the terminal's question, `bingo --trust`'s line
and `/plugins`' summary. Trust lives in the user's data directory and nowhere else: no
project file can trust its own project. It does not discover plugins (discovery.py), read
settings (kernel/settings.py), start anything (host.py) or draw the question (a surface
does, through the kernel's `Asker`).
"""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import json
import logging
import os
import stat
from collections.abc import Generator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Final, Literal

import msgspec

from ..kernel.atomic import write_atomic
from ..kernel.errors import GateError, PluginError
from ..kernel.settings import PROJECT_SETTINGS, Settings
from ..kernel.turn import Asker
from ..wire import Json, is_object
from .discovery import PluginSource
from .manifest import PLUGIN_ROOT

__all__ = [
    "MCP_FILE",
    "TRUST_FILE",
    "Fingerprint",
    "Item",
    "TrustState",
    "TrustStatus",
    "admitted",
    "ask_trust",
    "fingerprint",
    "keep_written",
    "left_out_notice",
    "remember",
    "trust_line",
    "trust_question",
    "trust_summary",
    "trust_state",
]

_log = logging.getLogger(__name__)

TRUST_FILE: Final = "trust.json"
"""The record of trusted projects, in the data directory (`~/.bingo/data/`)."""
MCP_FILE: Final = ".mcp.json"
"""The MCP server list other agent hosts read, at the project's root."""

_CONTENT_BUDGET: Final = 512 * 1024 * 1024
"""Bytes of contents hashed per plugin: far past any plugin's own code (a 50 MB
`node_modules/` hashes in well under a second, ADR-0016); past it, the plugin has no digest."""
_ENTRY_BUDGET: Final = 200_000
"""Files, links and directories walked per plugin, for the same reason."""
_MCP_MAX_BYTES: Final = 1_000_000
"""A `.mcp.json` larger than this is not read for its server names (it is still hashed)."""
_FORMAT: Final = 2
"""Format 1 pinned plugins only, by a rule with holes (ADR-0010): its records trust nothing."""

TrustStatus = Literal["none", "trusted", "untrusted", "changed"]
"""How a project stands: see `TrustState`."""
ItemKind = Literal["plugin", "settings", "mcp"]


# --- fingerprint -------------------------------------------------------------------


class Fingerprint(msgspec.Struct, frozen=True):
    """A plugin's digest (hex SHA-256), or None with `problem` saying why it has none;
    `outside` names each link (or entry path) that leads out of the project."""

    digest: str | None
    problem: str | None = None
    outside: tuple[str, ...] = ()


class _OverBudget(Exception):
    """The walk passed a budget: the plugin cannot be pinned."""


def _real(path: str) -> str:
    return os.path.realpath(path)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


_HASHERS: Final = 4
"""Threads hashing a plugin's files: opening and reading release the GIL, and on a busy
machine a small file costs far more in system calls than in SHA-256 (ADR-0016)."""


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
        """Hash every file the walk met, on a few threads, into its record."""
        if not self.hashing:
            return
        paths = [path for _, path in self.hashing]
        if len(paths) < 2 * _HASHERS:
            digests = list(map(_hash_file, paths))
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(_HASHERS, thread_name_prefix="bingo-trust") as pool:
                digests = list(pool.map(_hash_file, paths, chunksize=64))
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


def fingerprint(source: PluginSource, cwd: Path, *, contents: bool = True) -> Fingerprint:
    """The digest of a plugin as this module's docstring says. `cwd` is where the plugin
    will run: an entry argument relative to it (`main.py`) names a file there. Without
    `contents`, the same walk gives a signature of what it met by `stat` alone: what the
    declaration cache keys a user plugin by, never what trust pins."""
    within = _real(str(source.base))
    walk = _Walk(within, contents=contents)
    try:
        walk.node(".", str(source.root))
        plugin_root = _real(str(source.root))
        named: set[str] = set()
        for piece, via_root in _entry_words(source):
            path = piece if os.path.isabs(piece) else os.path.join(str(cwd), piece)
            real = _real(path)
            if real in named or _inside(real, plugin_root) or not os.path.lexists(real):
                continue
            if _inside(real, within):
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
    return Fingerprint(digest=walk.digest(), outside=tuple(walk.outside))


# --- what a project brings -----------------------------------------------------------


class Item(msgspec.Struct, frozen=True):
    """One thing a project brings. `key` is its name in the record (`plugin:<name>`,
    `settings.json`, `settings.local.json`, `.mcp.json`); `label` is how a person is told of
    it; `digest` None means it cannot be trusted (`problem` says why); `matters` is whether
    trust changes anything about it (settings that only tighten do not need trust)."""

    key: str
    kind: ItemKind
    label: str
    digest: str | None
    matters: bool
    problem: str | None = None
    outside: tuple[str, ...] = ()


def _bytes_digest(path: Path) -> tuple[bytes | None, str | None, str | None]:
    """The file's bytes, their digest, and why it has none; (None, None, None) if absent."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, None, None
    except OSError as exc:
        return None, None, f"{path} cannot be read ({exc.strerror or exc})"
    return data, hashlib.sha256(data).hexdigest(), None


def _mcp_servers(data: bytes) -> list[str]:
    """The server names a `.mcp.json` holds, for the question (never trusted for more)."""
    if len(data) > _MCP_MAX_BYTES:
        return []
    try:
        value: Json = json.loads(data)
    except (ValueError, RecursionError):
        return []
    servers = value.get("mcpServers") if is_object(value) else None
    return sorted(servers) if is_object(servers) else []


def _items(project: Path, cwd: Path, sources: Sequence[PluginSource], settings: Settings) -> list[Item]:
    items: list[Item] = []
    for source in sources:
        if source.layer != "project":
            continue
        print_ = fingerprint(source, cwd)
        items.append(
            Item(
                key=f"plugin:{source.name}",
                kind="plugin",
                label=f"plugin {source.name}",
                digest=print_.digest,
                matters=True,
                problem=print_.problem,
                outside=print_.outside,
            )
        )
    for name in PROJECT_SETTINGS:
        data, digest, problem = _bytes_digest(project / ".bingo" / name)
        if data is None and problem is None:
            continue
        keys = settings.left_out.get(name, ())
        label = f".bingo/{name}" + (f": {', '.join(keys)}" if keys else "")
        items.append(Item(key=name, kind="settings", label=label, digest=digest, matters=bool(keys), problem=problem))
    data, digest, problem = _bytes_digest(project / MCP_FILE)
    if data is not None or problem is not None:
        servers = _mcp_servers(data or b"")
        label = MCP_FILE + (f": servers {', '.join(servers)}" if servers else "")
        items.append(Item(key=MCP_FILE, kind="mcp", label=label, digest=digest, matters=True, problem=problem))
    return items


# --- the record --------------------------------------------------------------------


class _Project(msgspec.Struct, kw_only=True, rename="camel"):
    items: dict[str, str] = {}
    trusted_at: str = ""


class _Record(msgspec.Struct, kw_only=True):
    version: int = _FORMAT
    projects: dict[str, _Project] = {}


_DECODER = msgspec.json.Decoder(_Record)


def _key(project: Path) -> str:
    try:
        return str(project.resolve())
    except OSError:
        return str(project.absolute())


def _read(path: Path) -> _Record:
    """The record; an absent, unreadable, damaged or older one trusts nothing."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return _Record()
    except OSError as exc:
        _log.warning("cannot read %s (%s): no project is trusted", path, exc)
        return _Record()
    try:
        record = _DECODER.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
        _log.warning("%s is damaged (%s): no project is trusted", path, exc)
        return _Record()
    if record.version != _FORMAT:
        _log.info("%s is of format %s: no project is trusted until trusted again", path, record.version)
        return _Record()
    return record


@contextmanager
def _locked(path: Path) -> Generator[None]:
    """Two `bingo --trust` at once (two projects) must not lose one another's record."""
    with open(path.with_name(path.name + ".lock"), "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _update(data_dir: Path, project: Path, change: Mapping[str, str], *, replace: bool) -> None:
    """Write `change` into the project's record: as all it trusts (`replace`), or over it.

    Raises:
        PluginError: the record cannot be written.
    """
    path = data_dir / TRUST_FILE
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        with _locked(path):
            record = _read(path)
            stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
            known = record.projects.get(_key(project))
            items = {} if replace or known is None else dict(known.items)
            items.update(change)
            record.projects[_key(project)] = _Project(items=items, trusted_at=stamp)
            write_atomic(path, msgspec.json.format(msgspec.json.encode(record), indent=2) + b"\n")
    except OSError as exc:
        raise PluginError(
            f"cannot record trust in {path}: {exc.strerror or exc}",
            "check that the directory is writable",
        ) from exc


# --- the verdict -------------------------------------------------------------------


class TrustState(msgspec.Struct, frozen=True):
    """A project against the record. `status`: `none` (it brings nothing that needs trust),
    `trusted` (all as trusted), `untrusted` (never trusted), `changed` (trusted before, but
    something is new or different). `items` is everything it brings; `pending` the keys of
    those that need trust and are not trusted as they are now, in `items`' order."""

    project: Path
    status: TrustStatus
    items: tuple[Item, ...]
    pending: tuple[str, ...]
    known: tuple[str, ...] = ()
    """The keys the record trusted before, whatever their digest now."""

    @property
    def trusted(self) -> bool:
        """Whether what the project brings may run and decide this run."""
        return not self.pending

    def digests(self) -> dict[str, str]:
        """Each project plugin's content digest, by plugin name (for the declaration cache)."""
        return {item.key.removeprefix("plugin:"): item.digest for item in self.items if item.kind == "plugin" and item.digest is not None}


def trust_state(
    *, project: Path, cwd: Path, sources: Sequence[PluginSource], settings: Settings, data_dir: Path
) -> TrustState:
    """How what the project brings (its plugins among `sources`, its settings files as
    `settings` saw them, its `.mcp.json`) stands against `<data_dir>/trust.json`."""
    items = _items(project, cwd, sources, settings)
    if not any(item.matters for item in items):
        return TrustState(project=project, status="none", items=tuple(items), pending=())
    known = _read(data_dir / TRUST_FILE).projects.get(_key(project))
    trusted = known.items if known is not None else {}
    pending = tuple(
        item.key for item in items if item.matters and (item.digest is None or trusted.get(item.key) != item.digest)
    )
    status: TrustStatus = "trusted" if not pending else "untrusted" if known is None else "changed"
    return TrustState(project=project, status=status, items=tuple(items), pending=pending, known=tuple(trusted))


def remember(state: TrustState, data_dir: Path) -> TrustState:
    """Trust the project as `state` found it (what the person was shown), replacing what was
    trusted before; the new state. Items without a digest stay pending. A project that
    brings nothing leaves the record untouched.

    Raises:
        PluginError: the record cannot be written.
    """
    if state.status == "none":
        return state
    digests = {item.key: item.digest for item in state.items if item.digest is not None}
    _update(data_dir, state.project, digests, replace=True)
    left = tuple(item.key for item in state.items if item.matters and item.digest is None)
    return TrustState(
        project=state.project,
        status="trusted" if not left else "changed",
        items=state.items,
        pending=left,
        known=tuple(digests),
    )


def keep_written(data_dir: Path, project: Path, name: str, before: bytes | None, after: bytes, *, untrusted_keys: bool) -> bool:
    """After bingo itself wrote project settings file `name` (an "always" answer), keep it
    trusted as written: record the digest of `after` when what it replaced was absent,
    trusted, or gave nothing beyond what tightens (`untrusted_keys` False). Otherwise the
    file held what the person never trusted, and stays untrusted; False then.

    Raises:
        PluginError: the record cannot be written.
    """
    if before is not None and untrusted_keys:
        known = _read(data_dir / TRUST_FILE).projects.get(_key(project))
        if known is None or known.items.get(name) != hashlib.sha256(before).hexdigest():
            return False
    _update(data_dir, project, {name: hashlib.sha256(after).hexdigest()}, replace=False)
    return True


def admitted(sources: Sequence[PluginSource], state: TrustState) -> tuple[list[PluginSource], list[tuple[PluginSource, str]]]:
    """The plugins this run starts, and those it lists without starting, with why. In a
    trusted project a project plugin wins its name (the user plugin it hides is listed);
    otherwise no project plugin runs and the user plugin of that name runs instead."""
    run: list[PluginSource] = []
    listed: list[tuple[PluginSource, str]] = []
    for source in sources:
        if source.layer == "user":
            run.append(source)
        elif state.trusted:
            run.append(source)
            if source.overrides is not None:
                listed.append((source.overrides, "hidden by the project's plugin of that name"))
        else:
            listed.append((source, "the project is not trusted: run bingo --trust to trust it"))
            if source.overrides is not None:
                run.append(source.overrides)
    return sorted(run, key=lambda s: s.name), listed


# --- words -------------------------------------------------------------------------


def _left_out(state: TrustState, sources: Sequence[PluginSource]) -> list[str]:
    """What a run leaves out of an untrusted project: all its plugins (not only the changed
    ones: it is one trust), and each settings file or `.mcp.json` with what it held."""
    hiding = {source.name for source in sources if source.layer == "project" and source.overrides is not None}
    words: list[str] = []
    plugins = [item.key.removeprefix("plugin:") for item in state.items if item.kind == "plugin"]
    if plugins:
        shown = [f"{name} (your own {name} runs instead)" if name in hiding else name for name in plugins]
        words.append("plugins " + ", ".join(shown))
    words += [item.label for item in state.items if item.kind != "plugin" and item.matters]
    return words


def left_out_notice(state: TrustState, sources: Sequence[PluginSource]) -> str:
    """The one notice for a run that left out what an untrusted project brings."""
    what = "; ".join(_left_out(state, sources))
    if state.status == "changed":
        changed = ", ".join(item.label.partition(":")[0] for item in state.items if item.key in state.pending)
        why = f"{state.project} changed since you trusted it ({changed})"
    else:
        why = f"{state.project} is not a trusted project"
    fix = f"run bingo --trust in {state.project} to trust it as it is now"
    cannot = [f"{item.label.partition(':')[0]}: {item.problem}" for item in state.items if item.matters and item.digest is None]
    if cannot:
        fix += f" (never trusted: {'; '.join(cannot)})"
    return f"{why}, so bingo left out what it brings: {what}; {fix}"


def trust_question(state: TrustState) -> str:
    """The question a terminal puts, in one screen: everything the project brings."""
    lines = [f"{state.project} brings code and settings of its own:"]
    for item in state.items:
        if not item.matters:
            continue
        mark = ""
        if item.digest is None:
            mark = f" (cannot be trusted: {item.problem})"
        elif item.key in state.pending:
            mark = " (changed)" if item.key in state.known else " (new)"
        lines.append(f"  {item.label}{mark}")
        lines += [f"    leads out of the project: {link}" for link in item.outside[:3]]
    verb = "Trust them as they are now" if state.status == "changed" else "Trust them"
    lines.append(f"{verb} and use them?")
    return "\n".join(lines)


def trust_summary(state: TrustState) -> str:
    """One line for `/plugins`: what of the project is trusted, what is not, and why."""
    brought = [item.label.partition(":")[0] for item in state.items if item.matters]
    if state.status == "none":
        return f"project {state.project}: brings nothing that needs trust"
    if state.trusted:
        return f"project {state.project}: trusted as it is ({', '.join(brought)})"
    pending = [item.label.partition(":")[0] for item in state.items if item.key in state.pending]
    return f"project {state.project}: not trusted ({', '.join(pending)} {'changed' if state.status == 'changed' else 'never trusted'}), so its plugins do not run and its settings only tighten; run bingo --trust"


def trust_line(before: TrustState, after: TrustState) -> str:
    """What `bingo --trust` prints: what it trusted, or that nothing changed."""
    project = before.project
    if before.status == "none":
        return f"{project} brings nothing that needs trust (no plugins, .mcp.json, or settings beyond deny and ask)"
    brought = "; ".join(item.label for item in before.items if item.matters and item.digest is not None)
    cannot = [f"{item.label.partition(':')[0]} ({item.problem})" for item in before.items if item.matters and item.digest is None]
    tail = f"; cannot be trusted: {', '.join(cannot)}" if cannot else ""
    links = [f"{item.label.partition(':')[0]}: {link}" for item in before.items for link in item.outside]
    if links:
        tail += f"; what leads out of the project is trusted too: {', '.join(links[:5])}" + (" ..." if len(links) > 5 else "")
    if before.trusted:
        return f"nothing changed: {project} is trusted as it is ({brought})"
    return f"trusted {project} as it is now: {brought}{tail}" if after.trusted or brought else f"nothing trusted in {project}{tail}"


async def ask_trust(asker: Asker, state: TrustState) -> bool:
    """Ask the person, once, whether to trust what the project brings; False when nobody can
    say, or when something of it cannot be trusted at all."""
    try:
        answer = await asker.ask(trust_question(state), ["yes", "no"])
    except GateError:
        return False
    return answer.strip().lower() in ("yes", "y")
