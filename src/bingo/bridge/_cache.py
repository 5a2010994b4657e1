"""The handshake-declaration cache: what each plugin answered to `initialize`, kept so that a
run can register a plugin's proxies without starting it.

Owns the cache's files (`<data_dir>/cache/declarations/<name>-<root hash>.json`, one per
plugin directory, written atomically by `kernel.atomic.write_atomic`), the key an answer is
filed under, and reading an entry back. The key (ADR-0012) is a SHA-256 over everything the
answer could depend on that the host can see before starting anything: the plugin directory's
content fingerprint (`fingerprint.fingerprint`: the manifest and every file, plus entry files
outside the directory), the protocol version, the plugin's root, the entry's argv and env
additions after `${PLUGIN_ROOT}`, the command as PATH resolves it, a hash of the
`plugins.<name>` settings slice, and the host's version. An entry is served only when its key
is the current one and it still passes the handshake's own checks (this protocol, the
manifest's name); anything else (absent, damaged, another key) is a miss, never an error.

Only accepted handshakes are filed: a refusal (another protocol, another name) is never
cached, so a refused plugin is asked again every run. What a plugin's answer depends on
beyond the key (the host's environment, the working directory, files it reads from
elsewhere) is caught by its first real handshake, which the host compares with the cached
entry (host.py).

It does not decide when plugins start or register anything (host.py does).
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import msgspec

from ..endpoint import decoder_for
from ..kernel.atomic import write_atomic
from ..kernel.programs import which
from ..wire import MAX_DEPTH, PROTOCOL_VERSION, InitializeResult, Json, too_deep
from .discovery import PluginSource, entry_command
from .fingerprint import fingerprint

__all__ = ["CACHE_DIR", "DECLARATIONS", "DeclarationCache", "Declared"]

_log = logging.getLogger(__name__)

CACHE_DIR: Final = "cache"
"""The host's caches, under the data directory (`~/.bingo/data/cache/`)."""
DECLARATIONS: Final = "declarations"
_FORMAT: Final = 1
"""Bumped when the entry's shape or the key's recipe changes: every old entry misses."""


class _Entry(msgspec.Struct, kw_only=True):
    format: int
    key: str
    declaration: msgspec.Raw


class _KeyParts(msgspec.Struct, array_like=True):
    """What a key is the hash of, in a fixed order."""

    format: int
    fingerprint: str
    protocol: int
    root: str
    argv: list[str]
    command: str
    env: dict[str, str]
    config: str
    host_version: str


class Declared(msgspec.Struct, frozen=True):
    """A plugin's key this run and the declaration cached under it, if any."""

    key: str
    info: InitializeResult | None


def _config_hash(config: Mapping[str, Json]) -> str:
    data = msgspec.json.encode(dict(config), order="sorted")
    return hashlib.sha256(data).hexdigest()


def _resolved(command: str, environ: Mapping[str, str]) -> str:
    """The file a bare command names on PATH (so a new interpreter first on PATH is a new
    key); a command with a directory in it stands for itself."""
    if os.sep in command:
        return command
    return which(command, environ) or command


def _content(source: PluginSource) -> str:
    """What stands for the plugin's files in its key: a project plugin's content
    fingerprint (the one trust pins, ADR-0016), a user plugin's `stat` signature (the cache
    guards no boundary, and a change of any file changes its change time, which no one can
    set back). One past trust's budget has no fingerprint: its key then misses no change of
    the manifest, and its first real handshake catches the rest (host.py compares it)."""
    found = fingerprint(source, source.base, contents=source.layer == "project")
    return found.digest or f"unpinned:{found.problem}"


class DeclarationCache:
    """The declarations of plugins, filed by key under `<data_dir>/cache/declarations/`."""

    def __init__(self, data_dir: Path) -> None:
        self.directory = data_dir / CACHE_DIR / DECLARATIONS

    def path(self, source: PluginSource) -> Path:
        """The file holding `source`'s entry: its name, and a hash of its directory so that
        two projects' plugins of one name keep an entry each."""
        where = hashlib.sha256(str(source.root).encode("utf-8", "surrogateescape")).hexdigest()
        return self.directory / f"{source.name}-{where[:16]}.json"

    def key(
        self,
        source: PluginSource,
        *,
        environ: Mapping[str, str],
        config: Mapping[str, Json],
        host_version: str,
        content: str | None = None,
    ) -> str:
        """The key `source`'s answer is filed under now (reads its files, unless `content`
        gives what stands for them: trust's digest of a project plugin, taken this run)."""
        manifest = source.manifest
        if manifest is None:
            raise ValueError(f"plugin {source.name} has no manifest")
        argv, env = entry_command(manifest, source.root, {})
        if manifest.mcp is not None and manifest.mcp.url is not None:
            # A Streamable HTTP server has no argv: what it is, is where it is and what it is sent.
            argv = [manifest.mcp.url, *sorted(f"{key}: {value}" for key, value in manifest.mcp.headers.items())]
        parts = _KeyParts(
            format=_FORMAT,
            fingerprint=content or _content(source),
            protocol=PROTOCOL_VERSION,
            root=str(source.root),
            argv=argv,
            command=_resolved(argv[0], {**environ, **env}),
            env=env,
            config=_config_hash(config),
            host_version=host_version,
        )
        return hashlib.sha256(msgspec.json.encode(parts, order="sorted")).hexdigest()

    def load(self, source: PluginSource, key: str) -> InitializeResult | None:
        """The declaration filed for `source` under `key`; None for a miss of any kind."""
        path = self.path(source)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        if too_deep(data):
            # What this host files came through a line of at most MAX_DEPTH: anything deeper
            # was not written by it, and would decode into a value too deep to walk.
            _log.warning("%s is damaged (nested too deeply, more than %d levels): ignored", path, MAX_DEPTH)
            return None
        try:
            entry = decoder_for(_Entry).decode(data)
            if entry.format != _FORMAT or entry.key != key:
                return None
            info = decoder_for(InitializeResult).decode(entry.declaration)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            _log.warning("%s is damaged (%s): ignored", path, exc)
            return None
        manifest = source.manifest
        if info.protocol != PROTOCOL_VERSION or manifest is None or info.name != manifest.name:
            return None  # never written by this host for this plugin: a refusal is not cached
        return info

    def lookup(
        self,
        source: PluginSource,
        *,
        environ: Mapping[str, str],
        config: Mapping[str, Json],
        host_version: str,
        content: str | None = None,
    ) -> Declared:
        """`source`'s key now and what is cached under it."""
        key = self.key(source, environ=environ, config=config, host_version=host_version, content=content)
        return Declared(key=key, info=self.load(source, key))

    def save(self, source: PluginSource, key: str, info: InitializeResult) -> None:
        """File `info` (an accepted handshake) under `key`, atomically: a reader sees the old
        entry or the new one. A cache that cannot be written is logged, never raised."""
        path = self.path(source)
        entry = _Entry(format=_FORMAT, key=key, declaration=msgspec.Raw(msgspec.json.encode(info)))
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            write_atomic(path, msgspec.json.encode(entry))
        except OSError as exc:
            _log.warning("cannot write the declaration cache %s: %s", path, exc)

    def forget(self, source: PluginSource) -> None:
        """Drop `source`'s entry (its plugin was refused)."""
        try:
            self.path(source).unlink(missing_ok=True)
        except OSError as exc:
            _log.warning("cannot remove %s: %s", self.path(source), exc)
