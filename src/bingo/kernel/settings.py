"""Settings: where the layers live, how they merge, and what a bad file is told.

Owns the four layers of INTERFACE.md §2 (user `~/.bingo/settings.json`, project
`<project>/.bingo/settings.json`, local `<project>/.bingo/settings.local.json`, then the
command-line overrides), the merge rule (later layers win for scalars and for each key of an
object; `permissions.allow`, `.ask` and `.deny` are concatenated), the project rule
(`find_project`, which passes over a `.bingo/` another user owns or others may write), what
an untrusted project's layers may give (`permissions.deny` and `permissions.ask` only, the
rest named in `Settings.left_out`; ADR-0016), and the one-line SettingsError for a file that
is not valid JSON or holds a known key of the wrong type (`_layer.py`: one document's shape
and its errors). It does not decide whether a project is trusted
(`bridge/trust.py` does), interpret permissions (the gate does) nor a plugin's slice (passed
as it is).

It runs past ~480 lines because every settings key of INTERFACE.md (sections 2–15: the
sandbox's grants, channels, checkpoints, command hooks, sign-ins) is declared here as one typed
field with its merge, so that a key's type, default and layer rule are read in one place.
"""

from __future__ import annotations

import difflib
import os
import stat
from collections.abc import Collection, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TypeAlias

import msgspec

from ..wire import DEFAULT_DEADLINES, Json, deadline_for
from ._layer import (
    COMMAND_HOOK_EVENTS,
    HOST_DEADLINES,
    KeyPath,
    Layer,
    MatcherLayer,
    PluginSandboxLayer,
    SandboxLayer,
    Source,
    _HooksLayer,  # pyright: ignore[reportPrivateUsage]
    as_array,
    as_object,
    read_layer,
)
from .home import bingo_home
from .sandboxing import LayerKind, SandboxGrants, SandboxSource, sandbox_grants

__all__ = [
    "COMMAND_HOOK_EVENTS",
    "DEFAULT_DEADLINES",
    "CommandHookEntry",
    "MatrixChannel",
    "Permissions",
    "PlacedRule",
    "Settings",
    "PROJECT_SETTINGS",
    "TIGHTENING",
    "bingo_home",
    "fail_closed_problems",
    "find_project",
    "layer_problem",
    "left_out_of",
    "load_settings",
    "read_settings",
    "SettingsFiles",
    "unsafe_layers",
]

_SETTINGS_FILE = "settings.json"
_LOCAL_FILE = "settings.local.json"
_RULE_LISTS = ("allow", "ask", "deny")

PROJECT_SETTINGS: tuple[str, str] = (_SETTINGS_FILE, _LOCAL_FILE)
"""The project's settings files, in `<project>/.bingo/`, in the order they merge."""
TIGHTENING: tuple[str, str] = ("deny", "ask")
"""The `permissions` lists an untrusted project's settings still give: they can only make
the gate refuse or ask, never let more through."""


class CommandHookEntry(msgspec.Struct, frozen=True):
    """One command hook in force (INTERFACE.md §11): its event (`PreToolUse`, ...), the
    matcher of its entry, the command, its timeout in seconds (None: the default), whether it
    fails closed, and the settings file it came from."""

    event: str
    matcher: str
    command: str
    timeout: float | None
    fail_closed: bool
    where: str
    package: tuple[str, str] | None = None
    """The directory and data directory of the installed package that brought it (ADR-0048):
    the hook may read both and write the second, and gets them as `CLAUDE_PLUGIN_ROOT` /
    `PLUGIN_ROOT` and `CLAUDE_PLUGIN_DATA` / `PLUGIN_DATA`."""


PlacedRule: TypeAlias = tuple[str, str, str]
"""Where a rule in force came from (a settings file, or `--allow` for the command line),
its list (`allow`, `ask`, `deny`) and the rule as written."""


class Permissions(msgspec.Struct, frozen=True):
    """The gate's rules, in the order the layers gave them."""

    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()


class MatrixChannel(msgspec.Struct, frozen=True):
    """`channels.matrix` of the user's own settings (INTERFACE.md §7b): the bot's account,
    where its access token is (the name of an environment variable, never the token), the
    rooms it joins, who it listens to, and the directory it works in. `question_seconds` is
    how long a question waits for an answer before it is "no" (`questionSeconds`);
    `shared_rooms` lets the bot answer in a room where others than `allowed_users` read
    (`sharedRooms`, ADR-0029)."""

    homeserver: str | None = None
    user_id: str | None = None
    access_token_env: str = "BINGO_MATRIX_TOKEN"
    rooms: tuple[str, ...] = ()
    allowed_users: tuple[str, ...] = ()
    cwd: str | None = None
    question_seconds: float = 300.0
    shared_rooms: bool = False


def _default_deadlines() -> Mapping[str, float]:
    return MappingProxyType({**DEFAULT_DEADLINES, **HOST_DEADLINES})


def _no_plugins() -> Mapping[str, Mapping[str, Json]]:
    return MappingProxyType({})


class Settings(msgspec.Struct, frozen=True):
    """The merged settings of this run."""

    provider: str | None = None
    model: str | None = None
    max_tokens: int = 4096
    model_attempts: int = 4
    """Tries of one request to a built-in provider that fails momentarily (429, 5xx,
    overloaded) before any of the answer arrived (`modelAttempts`); 1 means no retry."""
    model_stall_seconds: float = 300.0
    """Seconds a built-in provider's answer may go without an event that carries content
    (`modelStallSeconds`; keep-alives and pings do not count) before the turn fails."""
    mcp_variables: frozenset[str] = frozenset()
    """The environment variables a project's `.mcp.json` (or a project plugin's `mcp`) may
    expand (`mcpVariables`), read from the user's own settings and the command line only:
    a repository must not be able to send itself the person's keys (ADR-0028)."""
    context_window: int | None = None
    """Tokens of input the model takes (`contextWindow`); None for the providers' table of
    known models (`providers.context_window`), else the kernel's conservative default."""
    context_budget: int | None = None
    """Estimated tokens of a request (system prompt, tools and history) past which the
    history is compacted before it is sent (`contextBudget`); None for 80 % of the window."""
    tool_result_budget: int | None = None
    """Estimated tokens one tool result may hold before it is cut (`toolResultBudget`); None
    for a tenth of the window."""
    compactor: str | None = None
    """The compactor to use; None for the built-in one."""
    permissions: Permissions = msgspec.field(default_factory=Permissions)
    fail_closed: frozenset[str] = frozenset()
    """The plugins whose hooks answer `ask` when they fail or are late (`hooks.failClosed`,
    read from the user's own settings only: INTERFACE.md §5)."""
    deadlines: Mapping[str, float] = msgspec.field(default_factory=_default_deadlines)
    """Seconds per wire method: the wire's DEFAULT_DEADLINES (its method table), and the
    host's own (`packageInstall`: a package runner's first start, ADR-0036), overridden by
    the `deadlines` key of the layers."""
    plugins: Mapping[str, Mapping[str, Json]] = msgspec.field(default_factory=_no_plugins)
    """The `plugins.<name>` slices, passed to each plugin as they are."""
    left_out: Mapping[str, tuple[str, ...]] = msgspec.field(default_factory=lambda: MappingProxyType({}))
    """Per project settings file (`settings.json`, `settings.local.json`) that holds more
    than `TIGHTENING`, the keys an untrusted project's copy of it does not give, dotted
    (`permissions.allow`, `provider`). Filled whether or not the project is trusted: it is
    what trust decides about."""
    rules: tuple[PlacedRule, ...] = ()
    """Every rule in force, where it came from, in the order the layers gave them (what an
    untrusted project's file does not give is not in force), for the gate to name the
    malformed ones and those matching no tool once the tools are known."""
    matrix: MatrixChannel = msgspec.field(default_factory=MatrixChannel)
    """The Matrix channel, from the user's own settings only (a project's is not read)."""
    unknown: tuple[str, ...] = ()
    """One finished line per unknown key of every layer read, trusted or not
    (`<file>: unknown key permissions.dney (did you mean permissions.deny?)`), for the
    caller to say once."""
    sandbox: SandboxGrants = msgspec.field(default_factory=SandboxGrants)
    """The sandbox's mode and grants, each with where it came from; who may widen is
    applied (kernel.sandboxing): a project only narrows, adds hosts and paths inside it."""
    command_hooks: tuple[CommandHookEntry, ...] = ()
    """Every command hook in force, layer by layer (the user's, then the project's, then the
    local file's: each layer adds, none replaces), with where it came from; an untrusted
    project's are not in force (its `hooks` is left out)."""

    checkpoint_max_bytes: int = 2 << 30
    """Bytes every project's checkpoints may keep together (`checkpoints.maxBytes`)."""
    checkpoint_max_file_bytes: int = 50 << 20
    """A file bigger than this is not recorded in a checkpoint (`checkpoints.maxFileBytes`)."""
    agents_max_concurrent: int = 4
    """Child conversations (the `agent` tool's) that run at once (`agents.maxConcurrent`)."""

    def deadline(self, method: str) -> float:
        """Seconds a call of wire `method` may take."""
        return deadline_for(method, self.deadlines)


def _merge(base: dict[str, Json], over: Mapping[str, Json], path: KeyPath = ()) -> None:
    """Merge `over` into `base`: objects key by key, rule lists concatenated, else `over`."""
    for key, value in over.items():
        here = (*path, key)
        old, new = as_object(base.get(key)), as_object(value)
        if old is not None and new is not None:
            _merge(old, new, here)
            base[key] = old
        elif here[:1] == ("permissions",) and len(here) == 2 and key in _RULE_LISTS:
            base[key] = [*(as_array(base.get(key)) or []), *(as_array(value) or [])]
        elif new is not None:
            fresh: dict[str, Json] = {}
            _merge(fresh, new, here)
            base[key] = fresh
        else:
            base[key] = value


def _settings(layer: Layer, left_out: dict[str, tuple[str, ...]]) -> Settings:
    deadlines = {**DEFAULT_DEADLINES, **HOST_DEADLINES}
    deadlines.update({name: float(seconds) for name, seconds in layer.deadlines.items()})
    plugins: dict[str, Mapping[str, Json]] = {}
    for name, slice_ in layer.plugins.items():
        fields = as_object(slice_)
        if fields is not None:
            plugins[name] = fields
    return Settings(
        provider=layer.provider,
        model=layer.model,
        max_tokens=layer.max_tokens,
        model_attempts=layer.model_attempts,
        model_stall_seconds=layer.model_stall_seconds,
        context_window=layer.context_window,
        context_budget=layer.context_budget,
        tool_result_budget=layer.tool_result_budget,
        compactor=layer.compactor,
        permissions=Permissions(
            allow=tuple(layer.permissions.allow),
            ask=tuple(layer.permissions.ask),
            deny=tuple(layer.permissions.deny),
        ),
        deadlines=MappingProxyType(deadlines),
        plugins=MappingProxyType(plugins),
        left_out=MappingProxyType(left_out),
        checkpoint_max_bytes=layer.checkpoints.max_bytes,
        checkpoint_max_file_bytes=layer.checkpoints.max_file_bytes,
        agents_max_concurrent=layer.agents.max_concurrent,
    )


def _same(a: Path, b: Path) -> bool:
    return a.resolve() == b.resolve()


def _beyond_tightening(document: Mapping[str, Json]) -> tuple[tuple[str, ...], dict[str, Json]]:
    """The keys of a project settings document that only trust may give (dotted), and the
    document cut down to what it gives untrusted: `permissions.deny` and `.ask`."""
    left: list[str] = []
    kept: dict[str, Json] = {}
    for key, value in document.items():
        permissions = as_object(value) if key == "permissions" else None
        if permissions is None:
            left.append(key)
            continue
        tight: dict[str, Json] = {}
        for name, rules in permissions.items():
            if name in TIGHTENING:
                tight[name] = rules
            else:
                left.append(f"permissions.{name}")
        kept["permissions"] = tight
    return tuple(left), kept


def left_out_of(document: Mapping[str, Json]) -> tuple[str, ...]:
    """The keys of a project settings document that an untrusted project does not give."""
    return _beyond_tightening(document)[0]


def layer_problem(directory: Path) -> str | None:
    """Why `directory/.bingo` must not be used as a project layer (another user owns it, or
    others may write to it: as git ignores a repository it does not own), or None."""
    layer = directory / ".bingo"
    try:
        info = layer.stat()
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode):
        return None
    if info.st_uid != os.geteuid():
        return f"{layer} is owned by another user"
    if info.st_mode & stat.S_IWOTH:
        return f"{layer} is writable by every user"
    return None


class SettingsFiles:
    """The settings files of one project, each read once: merged as an untrusted project
    first, then, once the person trusts it, again from the same bytes: a file changed in
    between is not read again, and the two merges never disagree on what a layer said."""

    __slots__ = ("_project_dir", "_sources", "_user")

    def __init__(self, *, user: Path, project_dir: Path, sources: list[tuple[Path | None, Source]]) -> None:
        self._user = user
        self._project_dir = project_dir
        self._sources = sources

    @property
    def user_source(self) -> Source | None:
        """The user layer's document as read (None when there is no file)."""
        return next((source for path, source in self._sources if path == self._user), None)

    def merged(self, *, project_trusted: bool) -> Settings:
        """The layers merged. Unless `project_trusted`, the two project files give only
        `permissions.deny` and `.ask`; what each holds beyond that is named in
        `Settings.left_out` either way, and every layer's unknown keys in `Settings.unknown`.

        Raises:
            SettingsError: a file holds a known key of the wrong type.
        """
        return _merged(self._sources, user=self._user, project_dir=self._project_dir, project_trusted=project_trusted)


def read_settings(
    *,
    home: Path,
    project: Path,
    overrides: Mapping[str, Json] | None = None,
    user: SettingsFiles | None = None,
) -> SettingsFiles:
    """Read the layers: `home/settings.json` (home is the user layer, ~/.bingo),
    `project/.bingo/settings.json`, `project/.bingo/settings.local.json`, then `overrides`
    (camelCase keys, from the command line). Missing files are fine. A project `.bingo/`
    that `layer_problem` refuses is not read at all. `user`: files read before (for another
    project), whose user layer is taken as it was read rather than read again.

    Raises:
        SettingsError: a file is not UTF-8 JSON, or is nested too deeply.
    """
    user_path = home / _SETTINGS_FILE
    paths: list[Path] = []
    project_dir = project / ".bingo"
    # When the project's .bingo is the user layer itself, reading it twice would
    # concatenate every rule list with itself.
    if not _same(project_dir, home) and layer_problem(project) is None:
        paths += [project_dir / name for name in PROJECT_SETTINGS]
    mine = user.user_source if user is not None else read_layer(user_path)
    sources: list[tuple[Path | None, Source]] = [] if mine is None else [(user_path, mine)]
    sources += [(path, source) for path in paths if (source := read_layer(path)) is not None]
    if overrides is not None:
        sources.append((None, Source("the command line", dict(overrides), None)))
    return SettingsFiles(user=user_path, project_dir=project_dir, sources=sources)


def load_settings(
    *,
    home: Path,
    project: Path,
    project_trusted: bool,
    overrides: Mapping[str, Json] | None = None,
) -> Settings:
    """`read_settings` then `SettingsFiles.merged`, for a caller that reads and merges once.

    Raises:
        SettingsError: a file is not valid JSON or holds a known key of the wrong type.
    """
    return read_settings(home=home, project=project, overrides=overrides).merged(project_trusted=project_trusted)


def _merged(
    sources: list[tuple[Path | None, Source]], *, user: Path, project_dir: Path, project_trusted: bool
) -> Settings:
    merged: dict[str, Json] = {}
    left_out: dict[str, tuple[str, ...]] = {}
    fail_closed: frozenset[str] = frozenset()
    variables: set[str] = set()
    matrix = MatrixChannel()
    unknown: list[str] = []
    rules: list[PlacedRule] = []
    sandboxes: list[SandboxSource] = []
    command_hooks: list[CommandHookEntry] = []
    for path, source in sources:
        layer = source.check()
        unknown += source.unknown()
        if path == user:
            fail_closed = frozenset(layer.hooks.fail_closed)  # the user's own settings only (§5)
            matrix = _matrix(layer)  # likewise (§7b)
        if path is None or path == user:
            variables.update(layer.mcp_variables)  # the person's own: a project's is not read
        elif layer.mcp_variables:
            unknown.append(
                f"{path}: mcpVariables is read from your own settings only ({user}): a project cannot list variables for itself"
            )
        document = as_object(source.data)
        if document is None:
            continue
        if path is not None and path.parent == project_dir:
            left, tight = _beyond_tightening(document)
            if left:
                left_out[path.name] = left
            if not project_trusted:
                document = tight
        rules += _placed(document, str(path) if path is not None else None)
        hooks, skipped = _command_hooks(document, str(path) if path is not None else "the command line")
        command_hooks += hooks
        unknown += skipped
        kind: LayerKind = "command line" if path is None else "user" if path == user else "project"
        sandboxes.append(_sandbox_source(document, kind, str(path) if path is not None else "--no-sandbox"))
        _merge(merged, document)
    settings = _settings(msgspec.convert(merged, Layer), left_out)
    grants = sandbox_grants(sandboxes, project=project_dir.parent, user_settings=str(user))
    return msgspec.structs.replace(
        settings,
        fail_closed=fail_closed,
        mcp_variables=frozenset(variables),
        matrix=matrix,
        rules=tuple(rules),
        unknown=tuple(unknown),
        sandbox=grants,
        command_hooks=tuple(command_hooks),
    )


def _sandbox_source(document: Mapping[str, Json], kind: LayerKind, where: str) -> SandboxSource:
    """The sandbox settings of one checked layer's document (cut to what it gives)."""
    sandbox = msgspec.convert(document.get("sandbox", {}), SandboxLayer)
    plugins: dict[str, PluginSandboxLayer] = {}
    for name, slice_ in (as_object(document.get("plugins")) or {}).items():
        fields = as_object(slice_) or {}
        if "sandbox" in fields:
            plugins[name] = msgspec.convert(fields["sandbox"], PluginSandboxLayer)
    return SandboxSource(kind=kind, where=where, sandbox=sandbox, plugins=plugins)


def _command_hooks(document: Mapping[str, Json], where: str) -> tuple[list[CommandHookEntry], list[str]]:
    """The command hooks a checked layer's document gives, event by event, in its order; and
    one line per hook that does not run (a type other than `command`, or no command)."""
    hooks = msgspec.convert(document.get("hooks", {}), _HooksLayer)
    out: list[CommandHookEntry] = []
    skipped: list[str] = []
    for event in COMMAND_HOOK_EVENTS:
        for index, entry in enumerate(_entries(hooks, event)):
            for at, hook in enumerate(entry.hooks):
                here = f"{where}: hooks.{event}[{index}].hooks[{at}]"
                if hook.type != "command":
                    skipped.append(f'{here} is of type {hook.type[:40]!r}, which bingo does not run (only "command")')
                elif not hook.command.strip():
                    skipped.append(f"{here} has no command, so it does not run")
                else:
                    closed = hook.fail_closed or entry.fail_closed
                    out.append(CommandHookEntry(event, entry.matcher, hook.command, hook.timeout, closed, where))
    return out, skipped


def _entries(hooks: _HooksLayer, event: str) -> list[MatcherLayer]:
    for field in msgspec.structs.fields(hooks):
        if field.encode_name == event:
            entries: list[MatcherLayer] = getattr(hooks, field.name)
            return entries
    return []


def _placed(document: Mapping[str, Json], where: str | None) -> list[PlacedRule]:
    """The rules a checked layer's document gives, with where they came from (`--allow`
    for the command line's)."""
    permissions = as_object(document.get("permissions")) or {}
    placed: list[PlacedRule] = []
    for kind in _RULE_LISTS:
        for rule in as_array(permissions.get(kind)) or []:
            if isinstance(rule, str):
                placed.append((where or f"--{kind}", kind, rule))
    return placed


def fail_closed_problems(names: Collection[str], plugins: Collection[str], where: str) -> list[str]:
    """One line per `hooks.failClosed` name (from the settings file `where`) that names no
    plugin discovered this run, with the closest plugin name."""
    lines: list[str] = []
    for name in sorted(names):
        if name in plugins:
            continue
        line = f"{where}: hooks.failClosed names {name!r}, which is no plugin"
        close = difflib.get_close_matches(name, list(plugins), n=1)
        if close:
            line += f" (did you mean {close[0]}?)"
        lines.append(line)
    return lines


def _matrix(layer: Layer) -> MatrixChannel:
    given = layer.channels.matrix
    default = MatrixChannel()
    return MatrixChannel(
        homeserver=given.homeserver,
        user_id=given.user_id,
        access_token_env=given.access_token_env or default.access_token_env,
        rooms=tuple(given.rooms),
        allowed_users=tuple(given.allowed_users),
        cwd=given.cwd,
        question_seconds=given.question_seconds or default.question_seconds,
        shared_rooms=bool(given.shared_rooms),
    )


def _markers(directory: Path) -> tuple[bool, str | None]:
    """Whether `directory` marks a project, and why its `.bingo/` is passed over if it is."""
    problem = layer_problem(directory)
    has_layer = (directory / ".bingo").is_dir() and problem is None
    return has_layer or (directory / ".git").exists(), problem


def find_project(cwd: Path, user_home: Path) -> Path:
    """The nearest directory at or above `cwd` holding a `.bingo/` directory or a `.git`,
    never `user_home` ($HOME) itself, whose `.bingo` is the user layer; with none, `cwd`.
    A `.bingo/` that `layer_problem` refuses marks nothing (its `.git` still does)."""
    start = cwd.resolve()
    home = user_home.resolve()
    for directory in (start, *start.parents):
        if directory == home:
            continue
        if _markers(directory)[0]:
            return directory
    return start


def unsafe_layers(cwd: Path, user_home: Path) -> list[str]:
    """Why each `.bingo/` that `find_project` passed over, or whose project it is, is not
    used: one line each, from `cwd` up to the project."""
    start = cwd.resolve()
    home = user_home.resolve()
    found: list[str] = []
    for directory in (start, *start.parents):
        if directory == home:
            continue
        marks, problem = _markers(directory)
        if problem is not None:
            found.append(problem)
        if marks:
            break
    return found
