"""Settings: where the layers live, how they merge, and what a bad file is told.

Owns the four layers of INTERFACE.md §2 (user `~/.bingo/settings.json`, project
`<project>/.bingo/settings.json`, local `<project>/.bingo/settings.local.json`, then the
command-line overrides), the merge rule (later layers win for scalars and for each key of an
object; `permissions.allow`, `.ask` and `.deny` are concatenated), the project rule
(`find_project`, which passes over a `.bingo/` another user owns or others may write), what
an untrusted project's layers may give (`permissions.deny` and `permissions.ask` only, the
rest named in `Settings.left_out`; ADR-0016), and the one-line SettingsError for a file that
is not valid JSON or holds a known key of the wrong type. Unknown keys are ignored, so a
newer file works with an older host. It does not decide whether a project is trusted
(`bridge/trust.py` does), interpret permissions (the gate does) nor a plugin's slice (passed
as it is).
"""

from __future__ import annotations

import bisect
import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, TypeAlias, get_args, get_origin

import msgspec

from ..wire import DEFAULT_DEADLINES, MAX_DEPTH, Json, deadline_for, too_deep
from .errors import SettingsError
from .home import bingo_home

__all__ = [
    "DEFAULT_DEADLINES",
    "Permissions",
    "Settings",
    "PROJECT_SETTINGS",
    "TIGHTENING",
    "bingo_home",
    "find_project",
    "layer_problem",
    "left_out_of",
    "load_settings",
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


class Permissions(msgspec.Struct, frozen=True):
    """The gate's rules, in the order the layers gave them."""

    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()


def _default_deadlines() -> Mapping[str, float]:
    return MappingProxyType(dict(DEFAULT_DEADLINES))


def _no_plugins() -> Mapping[str, Mapping[str, Json]]:
    return MappingProxyType({})


class Settings(msgspec.Struct, frozen=True):
    """The merged settings of this run."""

    provider: str | None = None
    model: str | None = None
    max_tokens: int = 4096
    context_budget: int = 100_000
    """Estimated tokens of history before compaction runs."""
    compactor: str | None = None
    """The compactor to use; None for the built-in one."""
    permissions: Permissions = msgspec.field(default_factory=Permissions)
    fail_closed: frozenset[str] = frozenset()
    """The plugins whose hooks answer `ask` when they fail or are late (`hooks.failClosed`,
    read from the user's own settings only: INTERFACE.md §5)."""
    deadlines: Mapping[str, float] = msgspec.field(default_factory=_default_deadlines)
    """Seconds per wire method: the wire's DEFAULT_DEADLINES (its method table), overridden
    by the `deadlines` key of the layers."""
    plugins: Mapping[str, Mapping[str, Json]] = msgspec.field(default_factory=_no_plugins)
    """The `plugins.<name>` slices, passed to each plugin as they are."""
    left_out: Mapping[str, tuple[str, ...]] = msgspec.field(default_factory=lambda: MappingProxyType({}))
    """Per project settings file (`settings.json`, `settings.local.json`) that holds more
    than `TIGHTENING`, the keys an untrusted project's copy of it does not give, dotted
    (`permissions.allow`, `provider`). Filled whether or not the project is trusted: it is
    what trust decides about."""

    def deadline(self, method: str) -> float:
        """Seconds a call of wire `method` may take."""
        return deadline_for(method, self.deadlines)


# --- finding and saying where a key is ----------------------------------------------

_KeyPath: TypeAlias = tuple[str | int, ...]
"""A place in a JSON document: object keys and list indexes, from the root."""

_WHITESPACE = " \t\n\r"
_LONGEST_SHOWN = 40


def _key_lines(text: str) -> dict[_KeyPath, int]:
    """The line of every key (and list item) of the valid JSON document `text`."""
    newlines = [i for i, char in enumerate(text) if char == "\n"]
    decoder = json.JSONDecoder()
    lines: dict[_KeyPath, int] = {}

    def line(i: int) -> int:
        return bisect.bisect_left(newlines, i) + 1

    def skip(i: int) -> int:
        while i < len(text) and text[i] in _WHITESPACE:
            i += 1
        return i

    def value(i: int, path: _KeyPath) -> int:
        i = skip(i)
        lines.setdefault(path, line(i))
        if text[i] not in "{[":
            return decoder.raw_decode(text, i)[1]
        closing = "}" if text[i] == "{" else "]"
        i = skip(i + 1)
        index = 0
        while text[i] != closing:
            if closing == "}":
                key, after = decoder.raw_decode(text, i)
                if not isinstance(key, str):
                    raise ValueError("an object key that is not a string")
                here: _KeyPath = (*path, key)
                lines[here] = line(i)  # a repeated key: the last one is the one that counts
                i = value(skip(after) + 1, here)
            else:
                here = (*path, index)
                lines[here] = line(i)
                i = value(i, here)
                index += 1
            i = skip(i)
            if text[i] == ",":
                i = skip(i + 1)
        return i + 1

    try:
        value(0, ())
    except (ValueError, IndexError, RecursionError):
        # Only reached for text json.loads refused; the caller falls back to line 1.
        pass
    return lines


def _describe(value: Json) -> str:
    """What a value is, in words, for an error line."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        shown = value if len(value) <= _LONGEST_SHOWN else value[:_LONGEST_SHOWN] + "..."
        return f"the string {json.dumps(shown)}"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _dotted(path: _KeyPath) -> str:
    """`permissions.allow[1]`: a key path as a person writes it."""
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out


# --- the shape of one layer ----------------------------------------------------------

_Positive = Annotated[int, msgspec.Meta(ge=1)]
_Seconds = Annotated[float, msgspec.Meta(gt=0)]


class _PermissionsLayer(msgspec.Struct, kw_only=True):
    allow: list[str] = []
    ask: list[str] = []
    deny: list[str] = []


class _HooksLayer(msgspec.Struct, kw_only=True, rename="camel"):
    fail_closed: list[str] = []


class _Layer(msgspec.Struct, kw_only=True, rename="camel"):
    """One settings document. Unknown keys are ignored (msgspec's default)."""

    provider: str | None = None
    model: str | None = None
    max_tokens: _Positive = 4096
    context_budget: _Positive = 100_000
    compactor: str | None = None
    permissions: _PermissionsLayer = msgspec.field(default_factory=_PermissionsLayer)
    hooks: _HooksLayer = msgspec.field(default_factory=_HooksLayer)
    # Mapping values are checked one by one below: msgspec's error path does not name the
    # key of a dict entry, and the key is what a person needs to find the mistake.
    deadlines: dict[str, Json] = {}
    plugins: dict[str, Json] = {}


# What each known key must be, for the hint. Dict entries use "*" for the entry's key.
_EXPECTED: dict[_KeyPath, str] = {
    (): "a JSON object",
    ("provider",): "a string (a provider id)",
    ("model",): "a string (a model name)",
    ("maxTokens",): "a positive whole number",
    ("contextBudget",): "a positive whole number",
    ("compactor",): "a string (a compactor name)",
    ("permissions",): "an object with allow, ask and deny lists",
    ("permissions", "allow"): "a list of tool rules (strings)",
    ("permissions", "ask"): "a list of tool rules (strings)",
    ("permissions", "deny"): "a list of tool rules (strings)",
    ("permissions", "allow", 0): "a tool rule (a string)",
    ("permissions", "ask", 0): "a tool rule (a string)",
    ("permissions", "deny", 0): "a tool rule (a string)",
    ("hooks",): "an object with a failClosed list",
    ("hooks", "failClosed"): "a list of plugin names (strings)",
    ("hooks", "failClosed", 0): "a plugin name (a string)",
    ("deadlines",): "an object mapping wire methods to seconds",
    ("deadlines", "*"): "a positive number of seconds",
    ("plugins",): "an object mapping plugin names to their settings",
    ("plugins", "*"): "an object (the plugin's settings)",
}

def _first_wrong(data: Json, shape: type[msgspec.Struct], path: _KeyPath) -> _KeyPath | None:
    """The path of the first known key of `data` (a document of `shape`) whose value has the
    wrong type, found key by key (so the path is known, not read back out of a library's
    error wording); None when every known key is right. Unknown keys are not looked at."""
    fields = _object(data)
    if fields is None:
        return path
    for field in msgspec.structs.fields(shape):
        if field.encode_name not in fields:
            continue
        value, here = fields[field.encode_name], (*path, field.encode_name)
        kind: object = field.type
        if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
            found = _first_wrong(value, kind, here)
            if found is not None:
                return found
            continue
        if get_origin(kind) is list:
            items = _array(value)
            if items is None:
                return here
            [item_type] = get_args(kind)
            for index, item in enumerate(items):
                if not _fits(item, item_type):
                    return (*here, index)
            continue
        if not _fits(value, field.type):
            return here
    return None


def _fits(value: Json, kind: object) -> bool:
    """Whether `value` converts to the type `kind` (an annotation msgspec understands)."""
    try:
        msgspec.convert(value, kind)
    except msgspec.ValidationError:
        return False
    return True


def _expected(path: _KeyPath) -> str:
    general = tuple(0 if isinstance(step, int) else step for step in path)
    if general in _EXPECTED:
        return _EXPECTED[general]
    return _EXPECTED.get((*path[:1], "*"), "a different type")


def _object(value: Json) -> dict[str, Json] | None:
    """`value` as a JSON object (a copy), or None when it is not one."""
    try:
        return msgspec.convert(value, dict[str, Json])
    except msgspec.ValidationError:
        return None


def _array(value: Json) -> list[Json] | None:
    """`value` as a JSON array (a copy), or None when it is not one."""
    try:
        return msgspec.convert(value, list[Json])
    except msgspec.ValidationError:
        return None


def _value_at(data: Json, path: _KeyPath) -> Json:
    value: Json = data
    for step in path:
        if isinstance(step, int):
            items = _array(value)
            if items is None or step >= len(items):
                return None
            value = items[step]
        else:
            fields = _object(value)
            if fields is None or step not in fields:
                return None
            value = fields[step]
    return value


class _Source:
    """One layer's document and where it came from, for the error line."""

    def __init__(self, label: str, data: Json, text: str | None) -> None:
        self.label = label
        self.data = data
        self.text = text

    def wrong(self, path: _KeyPath) -> SettingsError:
        """The error for a known key of the wrong type at `path`."""
        got = _describe(_value_at(self.data, path))
        hint = f"expected {_expected(path)}"
        if self.text is None:
            where = f"{_dotted(path)} from the command line" if path else "the command line"
            return SettingsError(f"{where} is {got}", hint)
        line = _key_lines(self.text).get(path, 1)
        if not path:
            return SettingsError(f"{self.label} (line {line}) holds {got}", hint)
        return SettingsError(f"{_dotted(path)} in {self.label} (line {line}) is {got}", hint)

    def check(self) -> _Layer:
        """Validate the document; SettingsError naming the first key of the wrong type."""
        wrong = _first_wrong(self.data, _Layer, ())
        if wrong is not None:
            raise self.wrong(wrong)
        try:
            layer = msgspec.convert(self.data, _Layer)
        except msgspec.ValidationError as exc:  # not reached: every known key was checked
            raise self.wrong(()) from exc
        for name, seconds in layer.deadlines.items():
            try:
                msgspec.convert(seconds, _Seconds)
            except msgspec.ValidationError as exc:
                raise self.wrong(("deadlines", name)) from exc
        for name, slice_ in layer.plugins.items():
            if _object(slice_) is None:
                raise self.wrong(("plugins", name))
        return layer


def _read(path: Path) -> _Source | None:
    """The document at `path`, or None when there is no file."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise SettingsError(f"{path} is not UTF-8 text", "save it as UTF-8 JSON") from exc
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise SettingsError(f"cannot read {path} ({reason})", "fix it or remove it") from exc
    if too_deep(text):
        # Before json.loads, which would recurse until RecursionError; and the merge, the
        # key locator and the layer check all walk the document recursively after it.
        raise SettingsError(
            f"{path} is nested too deeply (more than {MAX_DEPTH} levels)",
            "fix the file or remove it",
        )
    try:
        data: Json = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})",
            "fix the file or remove it",
        ) from exc
    return _Source(str(path), data, text)


def _merge(base: dict[str, Json], over: Mapping[str, Json], path: _KeyPath = ()) -> None:
    """Merge `over` into `base`: objects key by key, rule lists concatenated, else `over`."""
    for key, value in over.items():
        here = (*path, key)
        old, new = _object(base.get(key)), _object(value)
        if old is not None and new is not None:
            _merge(old, new, here)
            base[key] = old
        elif here[:1] == ("permissions",) and len(here) == 2 and key in _RULE_LISTS:
            base[key] = [*(_array(base.get(key)) or []), *(_array(value) or [])]
        elif new is not None:
            fresh: dict[str, Json] = {}
            _merge(fresh, new, here)
            base[key] = fresh
        else:
            base[key] = value


def _settings(layer: _Layer, left_out: dict[str, tuple[str, ...]]) -> Settings:
    deadlines = dict(DEFAULT_DEADLINES)
    deadlines.update({name: float(seconds) for name, seconds in layer.deadlines.items()})
    plugins: dict[str, Mapping[str, Json]] = {}
    for name, slice_ in layer.plugins.items():
        fields = _object(slice_)
        if fields is not None:
            plugins[name] = fields
    return Settings(
        provider=layer.provider,
        model=layer.model,
        max_tokens=layer.max_tokens,
        context_budget=layer.context_budget,
        compactor=layer.compactor,
        permissions=Permissions(
            allow=tuple(layer.permissions.allow),
            ask=tuple(layer.permissions.ask),
            deny=tuple(layer.permissions.deny),
        ),
        deadlines=MappingProxyType(deadlines),
        plugins=MappingProxyType(plugins),
        left_out=MappingProxyType(left_out),
    )


def _same(a: Path, b: Path) -> bool:
    return a.resolve() == b.resolve()


def _beyond_tightening(document: Mapping[str, Json]) -> tuple[tuple[str, ...], dict[str, Json]]:
    """The keys of a project settings document that only trust may give (dotted), and the
    document cut down to what it gives untrusted: `permissions.deny` and `.ask`."""
    left: list[str] = []
    kept: dict[str, Json] = {}
    for key, value in document.items():
        permissions = _object(value) if key == "permissions" else None
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


def load_settings(
    *,
    home: Path,
    project: Path,
    project_trusted: bool,
    overrides: Mapping[str, Json] | None = None,
) -> Settings:
    """Read and merge the layers: `home/settings.json` (home is the user layer, ~/.bingo),
    `project/.bingo/settings.json`, `project/.bingo/settings.local.json`, then `overrides`
    (camelCase keys, from the command line). Missing files are fine. Unless
    `project_trusted`, the two project files give only `permissions.deny` and `.ask`; what
    each holds beyond that is named in `Settings.left_out` either way. A project `.bingo/`
    that `layer_problem` refuses is not read at all.

    Raises:
        SettingsError: a file is not valid JSON or holds a known key of the wrong type.
    """
    paths = [home / _SETTINGS_FILE]
    project_dir = project / ".bingo"
    # When the project's .bingo is the user layer itself, reading it twice would
    # concatenate every rule list with itself.
    if not _same(project_dir, home) and layer_problem(project) is None:
        paths += [project_dir / name for name in PROJECT_SETTINGS]
    sources: list[tuple[Path | None, _Source]] = [(path, source) for path in paths if (source := _read(path)) is not None]
    if overrides is not None:
        sources.append((None, _Source("the command line", dict(overrides), None)))
    merged: dict[str, Json] = {}
    left_out: dict[str, tuple[str, ...]] = {}
    fail_closed: frozenset[str] = frozenset()
    for path, source in sources:
        layer = source.check()
        if path == paths[0]:
            fail_closed = frozenset(layer.hooks.fail_closed)  # the user's own settings only (§5)
        document = _object(source.data)
        if document is None:
            continue
        if path is not None and path.parent == project_dir:
            left, tight = _beyond_tightening(document)
            if left:
                left_out[path.name] = left
            if not project_trusted:
                document = tight
        _merge(merged, document)
    settings = _settings(msgspec.convert(merged, _Layer), left_out)
    return msgspec.structs.replace(settings, fail_closed=fail_closed)


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
