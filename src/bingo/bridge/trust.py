"""Trust in what a project brings: nothing a repository ships runs or decides before the
person has said so, and again only as it was when they said it (ADR-0016).

A project brings its plugins (`<project>/.bingo/plugins/`), its two settings files
(`.bingo/settings.json`, `.bingo/settings.local.json`) and `.mcp.json`. Each is one *item*
with a SHA-256 digest (`Item`); the project is trusted when every item that would change what
bingo does has the digest `<data_dir>/trust.json` records for it. One trust for the whole
project: until it holds, none of the project's plugins runs (a user plugin of the same name
runs instead: an untrusted plugin hides nothing) and its settings give only what tightens
(`permissions.deny` and `.ask`, `kernel/settings.py`).

A plugin's digest is its fingerprint (`fingerprint.py`: every byte that can run, no skip
list, nothing trusted by size or time); a settings file's is of its bytes, and `.mcp.json`'s of
its bytes and the code its servers run (ADR-0028). The question and `bingo --trust` show each
of its servers' command line or URL as written and every `${VAR}` it reads (ADR-0028).

Owns the items, the record (written atomically under a lock), the verdict for a run
(`TrustState`), which plugins a run starts (`admitted`), bingo's own writes staying trusted
(`keep_written`; a record of those alone is not the person's trust, ADR-0033), which files
changed since the person trusted it (`changed_paths`, from a bounded per-path record), and the
words: the notice, the terminal's question, `bingo --trust`'s line
and `/plugins`' summary. Trust lives in the user's data directory and nowhere else: no
project file can trust its own project. It does not discover plugins (discovery.py), read
settings (kernel/settings.py), start anything (host.py) or draw the question (a surface
does, through the kernel's `Asker`); reading a project into its items and their digests is
`_trust_item.py`'s.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import logging
from collections.abc import Generator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Final, Literal

import msgspec

from ..kernel.atomic import write_atomic
from ..kernel.errors import GateError, TrustError
from ..kernel.interfaces import Asker
from ..kernel.settings import Settings
from ._trust_item import MCP_FILE, SHORT, Item, changed_files, project_items
from .discovery import PluginSource

__all__ = [
    "MCP_FILE",
    "TRUST_FILE",
    "Item",
    "TrustState",
    "TrustStatus",
    "admitted",
    "ask_trust",
    "changed_paths",
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

_FORMAT: Final = 2
"""Format 1 pinned plugins only, by a rule with holes (ADR-0010): its records trust nothing."""
_NAMED: Final = 3
"""Changed files a notice or question names; the rest are counted."""
_NAME_CHARS: Final = 120
"""Characters of one named path (a longer one is cut)."""

TrustStatus = Literal["none", "trusted", "untrusted", "changed"]
"""How a project stands: see `TrustState`."""


# --- the record --------------------------------------------------------------------


class _Project(msgspec.Struct, kw_only=True, rename="camel"):
    items: dict[str, str] = {}
    trusted_at: str = ""
    files: dict[str, dict[str, str]] = {}
    """Per item key, its paths' short digests (`Item.files`), to say which file changed."""
    own: bool = False
    """Only bingo's own writes are recorded (an "always" in a project never trusted): the
    person has not trusted the project, so it reads as never trusted, not as changed."""


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


def _update(
    data_dir: Path, project: Path, change: Mapping[str, str], files: Mapping[str, Mapping[str, str]], *, replace: bool
) -> None:
    """Write `change` (digests by item key) and `files` (their paths' short digests) into the
    project's record: as all it trusts (`replace`, the person's own trust), or over it (bingo's
    own write, which leaves a project never trusted as never trusted).

    Raises:
        TrustError: the record cannot be written.
    """
    path = data_dir / TRUST_FILE
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        with _locked(path):
            record = _read(path)
            stamp = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
            known = record.projects.get(_key(project))
            fresh = replace or known is None
            items = {} if fresh or known is None else dict(known.items)
            items.update(change)
            kept = {} if fresh or known is None else dict(known.files)
            kept.update({key: dict(paths) for key, paths in files.items()})
            for key in change:
                if key not in files:
                    kept.pop(key, None)
            own = not replace and (known is None or known.own)
            record.projects[_key(project)] = _Project(items=items, trusted_at=stamp, files=kept, own=own)
            write_atomic(path, msgspec.json.format(msgspec.json.encode(record), indent=2) + b"\n")
    except OSError as exc:
        raise TrustError(
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
    changed: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Per pending item the record knew (key), the paths that differ from what was trusted,
    as far as the record can tell (empty: it cannot, and the item is named whole)."""

    @property
    def trusted(self) -> bool:
        """Whether what the project brings may run and decide this run."""
        return not self.pending

    def digests(self) -> dict[str, str]:
        """Each project plugin's content digest, by plugin name (for the declaration cache)."""
        return {
            item.key.removeprefix("plugin:"): item.digest
            for item in self.items
            if item.kind == "plugin" and item.digest is not None
        }


def trust_state(
    *, project: Path, cwd: Path, sources: Sequence[PluginSource], settings: Settings, data_dir: Path
) -> TrustState:
    """How what the project brings (its plugins among `sources`, its settings files as
    `settings` saw them, its `.mcp.json`) stands against `<data_dir>/trust.json`."""
    items = project_items(project, cwd, sources, settings)
    if not any(item.matters for item in items):
        return TrustState(project=project, status="none", items=tuple(items), pending=())
    known = _read(data_dir / TRUST_FILE).projects.get(_key(project))
    trusted = known.items if known is not None else {}
    pending = tuple(
        item.key for item in items if item.matters and (item.digest is None or trusted.get(item.key) != item.digest)
    )
    # A record of bingo's own writes alone is not the person's trust: never trusted, not changed.
    status: TrustStatus = "trusted" if not pending else "untrusted" if known is None or known.own else "changed"
    files = known.files if known is not None else {}
    changed = tuple(
        (item.key, tuple(changed_files(files.get(item.key, {}), dict(item.files))) if item.key in files else ())
        for item in items
        if item.key in pending and item.key in trusted
    )
    return TrustState(
        project=project, status=status, items=tuple(items), pending=pending, known=tuple(trusted), changed=changed
    )


def remember(state: TrustState, data_dir: Path) -> TrustState:
    """Trust the project as `state` found it (what the person was shown), replacing what was
    trusted before; the new state. Items without a digest stay pending. A project that
    brings nothing leaves the record untouched.

    Raises:
        TrustError: the record cannot be written.
    """
    if state.status == "none":
        return state
    digests = {item.key: item.digest for item in state.items if item.digest is not None}
    files = {item.key: dict(item.files) for item in state.items if item.digest is not None and item.files}
    _update(data_dir, state.project, digests, files, replace=True)
    left = tuple(item.key for item in state.items if item.matters and item.digest is None)
    return TrustState(
        project=state.project,
        status="trusted" if not left else "changed",
        items=state.items,
        pending=left,
        known=tuple(digests),
    )


def keep_written(
    data_dir: Path, project: Path, name: str, before: bytes | None, after: bytes, *, untrusted_keys: bool
) -> bool:
    """After bingo itself wrote project settings file `name` (an "always" answer), keep it
    trusted as written: record the digest of `after` when what it replaced was absent,
    trusted, or gave nothing beyond what tightens (`untrusted_keys` False). Otherwise the
    file held what the person never trusted, and stays untrusted; False then.

    Raises:
        TrustError: the record cannot be written.
    """
    if before is not None and untrusted_keys:
        known = _read(data_dir / TRUST_FILE).projects.get(_key(project))
        if known is None or known.items.get(name) != hashlib.sha256(before).hexdigest():
            return False
    digest = hashlib.sha256(after).hexdigest()
    _update(data_dir, project, {name: digest}, {name: {f".bingo/{name}": digest[:SHORT]}}, replace=False)
    return True


def admitted(
    sources: Sequence[PluginSource], state: TrustState
) -> tuple[list[PluginSource], list[tuple[PluginSource, str]]]:
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
        why = f"{state.project} changed since you trusted it ({_named(changed_paths(state))})"
    else:
        why = f"{state.project} is not a trusted project"
    fix = f"run bingo --trust in {state.project} to trust it as it is now"
    cannot = [
        f"{item.label.partition(':')[0]}: {item.problem}"
        for item in state.items
        if item.matters and item.digest is None
    ]
    if cannot:
        fix += f" (never trusted: {'; '.join(cannot)})"
    return f"{why}, so bingo left out what it brings: {what}; {fix}"


def changed_paths(state: TrustState) -> list[str]:
    """What changed since the person trusted the project, as a person reads it: each file the
    record can tell differs, and each pending item it cannot say more of, by name."""
    said = dict(state.changed)
    paths: list[str] = []
    for item in state.items:
        if item.key in state.pending:
            paths += said.get(item.key) or [item.label.partition(":")[0]]
    return paths


def _cut(path: str) -> str:
    return path if len(path) <= _NAME_CHARS else path[: _NAME_CHARS - 1] + "…"


def _named(paths: Sequence[str]) -> str:
    """The first `_NAMED` of `paths`, and how many more."""
    shown = ", ".join(_cut(path) for path in paths[:_NAMED])
    more = len(paths) - _NAMED
    return shown + (f" and {more} more" if more > 0 else "")


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
        files = dict(state.changed).get(item.key, ())
        if files:
            lines.append(f"    changed: {_named(files)}")
        lines += [f"    {detail}" for detail in item.details]
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
    pending = (
        _named(changed_paths(state))
        if state.status == "changed"
        else ", ".join(item.label.partition(":")[0] for item in state.items if item.key in state.pending)
    )
    return f"project {state.project}: not trusted ({pending} {'changed' if state.status == 'changed' else 'never trusted'}), so its plugins do not run and its settings only tighten; run bingo --trust"


def trust_line(before: TrustState, after: TrustState) -> str:
    """What `bingo --trust` prints: what it trusted, or that nothing changed."""
    project = before.project
    if before.status == "none":
        return f"{project} brings nothing that needs trust (no plugins, .mcp.json, or settings beyond deny and ask)"
    brought = "; ".join(item.label for item in before.items if item.matters and item.digest is not None)
    cannot = [
        f"{item.label.partition(':')[0]} ({item.problem})"
        for item in before.items
        if item.matters and item.digest is None
    ]
    tail = f"; cannot be trusted: {', '.join(cannot)}" if cannot else ""
    links = [f"{item.label.partition(':')[0]}: {link}" for item in before.items for link in item.outside]
    if links:
        tail += f"; what leads out of the project is trusted too: {', '.join(links[:5])}" + (
            " ..." if len(links) > 5 else ""
        )
    details = "".join(f"\n  {detail}" for item in before.items if item.matters for detail in item.details)
    if before.trusted:
        return f"nothing changed: {project} is trusted as it is ({brought}){details}"
    line = (
        f"trusted {project} as it is now: {brought}{tail}"
        if after.trusted or brought
        else f"nothing trusted in {project}{tail}"
    )
    return line + details


async def ask_trust(asker: Asker, state: TrustState) -> bool:
    """Ask the person, once, whether to trust what the project brings; False when nobody can
    say, or when something of it cannot be trusted at all."""
    try:
        answer = await asker.ask(trust_question(state), ["yes", "no"])
    except GateError:
        return False
    return answer.strip().lower() in ("yes", "y")
