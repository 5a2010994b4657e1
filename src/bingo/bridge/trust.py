"""Trust in a project's own plugins: code that arrived with a repository runs only once the
person has said so, and again only as it was when they said it.

Owns the fingerprint of a plugin directory, the record of trusted projects
(`<data_dir>/trust.json`, keyed by the project's resolved path, one fingerprint per plugin,
written atomically under a lock), the verdict for a run (`TrustState`), which sources a run
may start (`admitted`), the one notice for plugins that were not started, the question a
terminal puts, and the line `bingo --trust` prints. User-layer plugins are the person's own
and never need trust. Trust lives in the user's data directory and nowhere else: no
project file, settings included, can trust its own project.

The fingerprint (ADR-0010) is a SHA-256 over every entry under the plugin's directory, in
sorted order of relative path: a regular file (or a symlink to one) contributes its path,
its executable bit and its contents; a symlink to anything else contributes its path and
target text (the walk never follows a directory link); directories named in
`_SKIPPED_DIRS` (`__pycache__`, `.git`, tool caches) and `*.pyc` files are left out, as
written by running the plugin rather than by its author. A file named by the manifest's
entry (command or argument, after `${PLUGIN_ROOT}`) outside the directory is hashed too.
Contents are read up to `_CONTENT_BUDGET` bytes per plugin; past it a file contributes its
size and modification time instead, so a huge plugin is still asked about when it changes.

It does not discover plugins (discovery.py), start them (host.py) or draw the question (a
surface does, through the kernel's `Asker`).
"""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import logging
import os
import stat
from collections.abc import Generator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Final, Literal

import msgspec

from ..kernel.errors import GateError, PluginError
from ..kernel.notices import Notices
from ..kernel.turn import Asker
from .discovery import PluginSource
from .manifest import PLUGIN_ROOT

__all__ = [
    "TRUST_FILE",
    "TrustState",
    "TrustStatus",
    "admit",
    "admitted",
    "ask_trust",
    "fingerprint",
    "remember",
    "skip_notice",
    "trust_line",
    "trust_question",
    "trust_state",
]

_log = logging.getLogger(__name__)

TRUST_FILE: Final = "trust.json"
"""The record of trusted projects, in the data directory (`~/.bingo/data/`)."""

_SKIPPED_DIRS: Final = frozenset(
    {"__pycache__", ".git", ".hg", ".svn", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
)
_SKIPPED_SUFFIXES: Final = (".pyc", ".pyo")
# Bytes of file contents hashed per plugin; past this, size and mtime stand in for contents.
_CONTENT_BUDGET: Final = 64 * 1024 * 1024
_CHUNK: Final = 1024 * 1024
_FORMAT: Final = 1

TrustStatus = Literal["none", "trusted", "untrusted", "changed"]
"""How a project's plugins stand: see `TrustState`."""


# --- fingerprint -------------------------------------------------------------------


class _Budget(msgspec.Struct):
    left: int = _CONTENT_BUDGET


def _file_digest(path: Path, info: os.stat_result, budget: _Budget) -> str:
    if info.st_size > budget.left:
        budget.left = 0
        return f"meta:{info.st_size}:{info.st_mtime_ns}"
    digest = hashlib.sha256()
    try:
        with path.open("rb") as file:
            while chunk := file.read(_CHUNK):
                digest.update(chunk)
    except OSError as exc:
        return f"unreadable:{exc.errno}"
    budget.left -= info.st_size
    return digest.hexdigest()


def _entries(root: Path) -> list[tuple[str, Path]]:
    """Every file and link under `root`, sorted by relative path. A stack, not recursion, so a
    directory nested thousands deep is walked too; no directory link is followed."""
    found: list[tuple[str, Path]] = []
    stack = [""]
    while stack:
        relative = stack.pop()
        try:
            with os.scandir(root / relative if relative else root) as listing:
                children = list(listing)
        except OSError:
            continue
        for child in children:
            rel = f"{relative}/{child.name}" if relative else child.name
            try:
                is_dir = child.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if child.name not in _SKIPPED_DIRS:
                    stack.append(rel)
            elif not child.name.endswith(_SKIPPED_SUFFIXES):
                found.append((rel, Path(child.path)))
    return sorted(found)


def _record(name: str, path: Path, budget: _Budget) -> str:
    try:
        info = path.stat()
    except OSError:
        info = None
    if info is not None and stat.S_ISREG(info.st_mode):
        executable = "x" if info.st_mode & 0o111 else "-"
        return f"file\0{name}\0{executable}\0{_file_digest(path, info, budget)}"
    try:
        target = os.readlink(path)
    except OSError:
        target = ""
    return f"other\0{name}\0{target}"


def _outside_entry_files(source: PluginSource) -> list[Path]:
    """Files the manifest's entry names outside the plugin's directory."""
    manifest = source.manifest
    if manifest is None:
        return []
    root = str(source.root)
    found: list[Path] = []
    for word in (manifest.entry.command, *manifest.entry.args):
        path = Path(word.replace(PLUGIN_ROOT, root))
        if not path.is_absolute() or path.is_relative_to(source.root):
            continue
        try:
            if path.is_file():
                found.append(path)
        except OSError:
            continue
    return found


def fingerprint(source: PluginSource) -> str:
    """The SHA-256 (hex) of a plugin directory as the rule in this module's docstring says."""
    digest = hashlib.sha256()
    budget = _Budget()
    records = [_record(rel, path, budget) for rel, path in _entries(source.root)]
    records += [_record(f"entry:{path}", path, budget) for path in _outside_entry_files(source)]
    for record in records:
        # Length-prefixed, so no file name can make two different trees hash alike.
        data = record.encode("utf-8", "surrogateescape")
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


# --- the record --------------------------------------------------------------------


class _Project(msgspec.Struct, kw_only=True, rename="camel"):
    plugins: dict[str, str] = {}
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
    """The record; an absent, unreadable or damaged one trusts nothing."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return _Record()
    except OSError as exc:
        _log.warning("cannot read %s (%s): no project is trusted", path, exc)
        return _Record()
    try:
        return _DECODER.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        _log.warning("%s is damaged (%s): no project is trusted", path, exc)
        return _Record()


def _write(path: Path, record: _Record) -> None:
    """Temp file, fsync, rename, fsync the directory: a reader sees the old or the new file."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    data = msgspec.json.format(msgspec.json.encode(record), indent=2) + b"\n"
    try:
        with temp.open("wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


@contextmanager
def _locked(path: Path) -> Generator[None]:
    """Two `bingo --trust` at once (two projects) must not lose one another's record."""
    with open(path.with_name(path.name + ".lock"), "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


# --- the verdict -------------------------------------------------------------------


class TrustState(msgspec.Struct, frozen=True):
    """A project's plugins against the record. `status`: `none` (no project plugins),
    `trusted` (all as trusted), `untrusted` (never trusted), `changed` (trusted before, but
    some are new or different). `pending` names the project plugins not trusted as they are
    now, sorted; `fingerprints` holds every project plugin's current fingerprint."""

    project: Path
    status: TrustStatus
    fingerprints: Mapping[str, str]
    pending: tuple[str, ...]


def _project_sources(sources: Sequence[PluginSource]) -> list[PluginSource]:
    return [source for source in sources if source.layer == "project"]


def trust_state(project: Path, sources: Sequence[PluginSource], data_dir: Path) -> TrustState:
    """How the project's plugins among `sources` stand against `<data_dir>/trust.json`."""
    current = {source.name: fingerprint(source) for source in _project_sources(sources)}
    if not current:
        return TrustState(project=project, status="none", fingerprints={}, pending=())
    known = _read(data_dir / TRUST_FILE).projects.get(_key(project))
    trusted = known.plugins if known is not None else {}
    pending = tuple(sorted(name for name, digest in current.items() if trusted.get(name) != digest))
    status: TrustStatus = "trusted" if not pending else "untrusted" if known is None else "changed"
    return TrustState(project=project, status=status, fingerprints=current, pending=pending)


def remember(project: Path, sources: Sequence[PluginSource], data_dir: Path) -> TrustState:
    """Trust the project's plugins as they are now (replacing what was trusted before); the
    new state. A project without plugins of its own leaves the record untouched.

    Raises:
        PluginError: the record cannot be written.
    """
    return _remember(trust_state(project, sources, data_dir), data_dir)


def _remember(state: TrustState, data_dir: Path) -> TrustState:
    """Record exactly the fingerprints in `state` (what the person was asked about)."""
    if state.status == "none":
        return state
    path = data_dir / TRUST_FILE
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        with _locked(path):
            record = _read(path)
            stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
            trusted = _Project(plugins=dict(state.fingerprints), trusted_at=stamp)
            record.projects[_key(state.project)] = trusted
            _write(path, record)
    except OSError as exc:
        raise PluginError(
            f"cannot record trust in {path}: {exc.strerror or exc}",
            "check that the directory is writable",
        ) from exc
    return TrustState(
        project=state.project, status="trusted", fingerprints=state.fingerprints, pending=()
    )


def admitted(sources: Sequence[PluginSource], state: TrustState) -> list[PluginSource]:
    """The sources a run may start: all but the pending project plugins. A pending plugin
    that hides a user plugin of the same name still holds the name (ADR-0008: the project
    wins it outright), so neither starts: an unanswered question never changes which code
    answers to a name."""
    return [s for s in sources if s.layer != "project" or s.name not in state.pending]


# --- words -------------------------------------------------------------------------


def skip_notice(state: TrustState) -> str:
    """The one notice for project plugins that were not started."""
    names = ", ".join(state.pending)
    if state.status == "changed":
        why = f"they are new or changed since you trusted {state.project}"
        what = "to trust them as they are now"
    else:
        why = f"{state.project} is not a trusted project"
        what = "to trust them"
    where = f"run bingo --trust in {state.project}"
    return f"project plugins not started ({names}): {why}; {where} {what}"


def trust_question(state: TrustState) -> str:
    """The yes/no question a terminal puts when the project's plugins are pending."""
    names = ", ".join(state.pending)
    if state.status == "changed":
        return (
            f"This project's plugins changed since you trusted them ({names}). "
            "Trust them as they are now and start them?"
        )
    return (
        f"{state.project} has plugins of its own ({names}): code that came with the "
        "repository. Trust them and start them?"
    )


def trust_line(state: TrustState) -> str:
    """What `bingo --trust` prints once it has remembered `state`."""
    names = sorted(state.fingerprints)
    if not names:
        return f"{state.project} has no plugins of its own (.bingo/plugins/): nothing to trust"
    plural = "plugin" if len(names) == 1 else "plugins"
    return f"trusted {len(names)} {plural} of {state.project} as they are now: {', '.join(names)}"


async def ask_trust(asker: Asker, state: TrustState) -> bool:
    """Ask the person, once, whether to trust the pending plugins; False when nobody can say."""
    try:
        answer = await asker.ask(trust_question(state), ["yes", "no"])
    except GateError:
        return False
    return answer.strip().lower() in ("yes", "y")


async def admit(
    *,
    project: Path,
    sources: Sequence[PluginSource],
    data_dir: Path,
    notices: Notices,
    asker: Asker | None,
) -> list[PluginSource]:
    """The sources this run may start. With a pending project and an `asker` (a terminal),
    the person is asked once and a yes is remembered; otherwise, or after a no, the pending
    plugins are left out with one notice saying how to trust them."""
    state = trust_state(project, sources, data_dir)
    if state.pending and asker is not None and await ask_trust(asker, state):
        try:
            state = _remember(state, data_dir)
        except PluginError as exc:
            notices.say("bingo", exc.line(), "warning")
            # Trusted for this run only, since the person said yes.
            return list(sources)
    if state.pending:
        notices.say("bingo", skip_notice(state), "warning")
    return admitted(sources, state)
