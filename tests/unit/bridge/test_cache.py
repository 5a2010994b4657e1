"""The handshake-declaration cache: its key and files, and the host serving declarations from
it (real child processes: a tiny Python plugin written into tmp_path)."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from bingo.bridge import PluginHost, PluginSource
from bingo.bridge._cache import DeclarationCache
from bingo.bridge.manifest import Entry, Manifest
from bingo.kernel.interfaces import ToolCall
from bingo.kernel.notices import Notices
from bingo.kernel.registry import Registry
from bingo.kernel.settings import Settings
from bingo.wire import InitializeResult, Json, Notice, TextPart, ToolSpec

# Declares what the environment says (TOOLS, PROTOCOL, OBSERVES), which the cache's key does
# not cover: that is how a test makes a real handshake differ from the cached one.
_PLUGIN = textwrap.dedent(
    """
    import json, os, sys
    NAME = sys.argv[1]
    def send(message):
        sys.stdout.write(json.dumps(dict(message, jsonrpc="2.0")) + "\\n")
        sys.stdout.flush()
    for line in sys.stdin:
        message = json.loads(line)
        method, params = message.get("method"), message.get("params")
        if method == "initialize":
            data_dir = params["env"]["dataDir"]
            os.makedirs(data_dir, exist_ok=True)
            with open(os.path.join(data_dir, "starts.txt"), "a") as starts:
                starts.write(str(os.getpid()) + "\\n")
            tools = [{"name": t, "inputSchema": {"type": "object"}} for t in os.environ.get("TOOLS", "echo").split(",") if t]
            hooks = [{"name": "watch", "site": "session", "points": ["start"]}] if os.environ.get("OBSERVES") else []
            send({"id": message["id"], "result": {
                "protocol": int(os.environ.get("PROTOCOL", "5")), "name": NAME, "version": "1.0",
                "tools": tools, "commands": [{"name": NAME + "-cmd"}], "hooks": hooks,
            }})
        elif method == "tool/call":
            send({"id": message["id"], "result": {"output": {"parts": [{"type": "text", "text": params["name"]}]}}})
        elif method == "command/run":
            send({"id": message["id"], "result": {"outcome": {"kind": "text", "text": "ran"}}})
    """
)


def _source(tmp_path: Path, name: str = "alpha") -> PluginSource:
    root = tmp_path / "plugins" / name
    root.mkdir(parents=True, exist_ok=True)
    script = root / "main.py"
    if not script.exists() or script.read_text(encoding="utf-8") != _PLUGIN:
        # Written once: a user plugin's cache key is its files' stat signature (ADR-0016).
        script.write_text(_PLUGIN, encoding="utf-8")
    entry = Entry(command=sys.executable, args=["${PLUGIN_ROOT}/main.py", name])
    return PluginSource(
        name=name,
        layer="user",
        root=root,
        manifest=Manifest(name=name, version="0.1", entry=entry),
        problem=None,
        base=root.parent,
    )


def _starts(tmp_path: Path, name: str = "alpha") -> int:
    path = tmp_path / "data" / "plugins" / name / "starts.txt"
    return len(path.read_text().split()) if path.exists() else 0


Scenario = Callable[[PluginHost, Registry], Awaitable[None]]


async def _nothing(host: PluginHost, registry: Registry) -> None:
    return None


def _run(
    tmp_path: Path,
    scenario: Scenario = _nothing,
    *,
    env: dict[str, str] | None = None,
    sources: list[PluginSource] | None = None,
    settings: Settings | None = None,
) -> list[Notice]:
    notices = Notices()
    said: list[Notice] = []
    notices.listen(said.append)

    async def main() -> None:
        registry = Registry(notices)
        async with (
            asyncio.timeout(10),
            PluginHost(
                sources=sources or [_source(tmp_path)],
                registry=registry,
                notices=notices,
                settings=settings or Settings(),
                data_dir=tmp_path / "data",
                cwd=tmp_path,
                environ={**os.environ, **(env or {})},
            ) as host,
        ):
            await host.start()
            await scenario(host, registry)

    asyncio.run(main())
    return said


def _text(registry: Registry, tool: str) -> Callable[[], Awaitable[str]]:
    async def call() -> str:
        output = await registry.tools[tool].call(ToolCall("c1", {}, "/w", "s", 1))
        part = output.parts[0]
        assert isinstance(part, TextPart)
        return part.text

    return call


def _key(
    cache: DeclarationCache, source: PluginSource, *, config: dict[str, Json] | None = None, version: str = "1"
) -> str:
    return cache.key(source, environ=os.environ, config=config or {}, host_version=version)


# --- the cache itself ----------------------------------------------------------------


def test_the_key_changes_with_the_files_the_settings_slice_and_the_host_version(tmp_path: Path) -> None:
    cache = DeclarationCache(tmp_path / "data")
    source = _source(tmp_path)
    first = _key(cache, source)
    assert _key(cache, source) == first
    assert _key(cache, source, config={"greeting": "hi"}) != first
    assert _key(cache, source, version="2") != first
    (source.root / "helper.py").write_text("x = 1\n", encoding="utf-8")
    assert _key(cache, source) != first


def test_the_key_changes_with_the_entrys_arguments_and_environment(tmp_path: Path) -> None:
    cache = DeclarationCache(tmp_path / "data")
    source = _source(tmp_path)
    assert source.manifest is not None
    entry = source.manifest.entry
    other_args = Manifest(name="alpha", version="0.1", entry=Entry(command=entry.command, args=[*entry.args, "more"]))
    other_env = Manifest(
        name="alpha", version="0.1", entry=Entry(command=entry.command, args=entry.args, env={"MODE": "x"})
    )
    keys = {
        _key(
            cache,
            PluginSource(name="alpha", layer="user", root=source.root, manifest=m, problem=None, base=source.base),
        )
        for m in (source.manifest, other_args, other_env)
    }
    assert len(keys) == 3


def test_a_saved_declaration_is_served_only_under_its_own_key(tmp_path: Path) -> None:
    cache = DeclarationCache(tmp_path / "data")
    source = _source(tmp_path)
    info = InitializeResult(protocol=5, name="alpha", version="1.0", tools=[ToolSpec(name="echo")])
    cache.save(source, "k1", info)
    assert cache.load(source, "k1") == info
    assert cache.load(source, "k2") is None
    assert [p.name for p in cache.directory.iterdir()] == [cache.path(source).name]  # no temp file left


def test_a_damaged_entry_or_one_a_handshake_would_refuse_is_a_miss(tmp_path: Path) -> None:
    cache = DeclarationCache(tmp_path / "data")
    source = _source(tmp_path)
    cache.save(source, "k", InitializeResult(protocol=4, name="alpha"))
    assert cache.load(source, "k") is None
    cache.save(source, "k", InitializeResult(protocol=5, name="other"))
    assert cache.load(source, "k") is None
    cache.path(source).write_bytes(b'{"format": 1, "key": "k", "declaration": {"protoc')
    assert cache.load(source, "k") is None


@pytest.mark.parametrize("depth", [129, 100_000])
def test_an_entry_nested_too_deeply_is_a_miss(tmp_path: Path, depth: int) -> None:
    cache = DeclarationCache(tmp_path / "data")
    source = _source(tmp_path)
    schema = b"[" * depth + b"]" * depth
    info = b'{"protocol": 5, "name": "alpha", "tools": [{"name": "echo", "inputSchema": {"x": %s}}]}' % schema
    cache.save(source, "k", InitializeResult(protocol=5, name="alpha"))
    entry = cache.path(source).read_bytes()
    cache.path(source).write_bytes(entry[: entry.index(b'"declaration":')] + b'"declaration": ' + info + b"}")
    assert cache.load(source, "k") is None


# --- the host serving from it ------------------------------------------------------------


def test_a_warm_start_registers_from_the_cache_and_spawns_nothing(tmp_path: Path) -> None:
    _run(tmp_path)
    assert _starts(tmp_path) == 1

    async def scenario(host: PluginHost, registry: Registry) -> None:
        assert sorted(registry.tools) == ["plugin__alpha__echo"]
        assert sorted(registry.commands) == ["alpha-cmd"]
        [status] = host.status()
        assert (status.state, status.why, status.version) == ("idle", "not started yet", "1.0")
        assert status.contributes == ("tool plugin__alpha__echo", "command /alpha-cmd")

    said = _run(tmp_path, scenario)
    assert _starts(tmp_path) == 1
    assert said == []


def test_an_idle_plugin_starts_on_its_first_use_without_a_notice(tmp_path: Path) -> None:
    _run(tmp_path)

    async def scenario(host: PluginHost, registry: Registry) -> None:
        assert await _text(registry, "plugin__alpha__echo")() == "echo"
        assert host.status()[0].state == "running"

    said = _run(tmp_path, scenario)
    assert _starts(tmp_path) == 2
    assert said == []


def test_a_handshake_unlike_the_cache_re_registers_with_one_notice_and_is_filed(tmp_path: Path) -> None:
    _run(tmp_path)

    async def scenario(host: PluginHost, registry: Registry) -> None:
        assert sorted(registry.tools) == ["plugin__alpha__echo"]
        assert await _text(registry, "plugin__alpha__echo")() == "echo"
        assert sorted(registry.tools) == ["plugin__alpha__extra"]
        assert host.status()[0].contributes == ("tool plugin__alpha__extra", "command /alpha-cmd")

    said = _run(tmp_path, scenario, env={"TOOLS": "extra"})
    assert [(n.source, n.message) for n in said] == [
        ("alpha", "declares other contributions than the ones registered for it; what it declares now is registered")
    ]

    async def filed(host: PluginHost, registry: Registry) -> None:
        assert sorted(registry.tools) == ["plugin__alpha__extra"]
        assert host.status()[0].state == "idle"

    assert _run(tmp_path, filed, env={"TOOLS": "extra"}) == []
    assert _starts(tmp_path) == 2


def test_a_refusal_is_never_cached(tmp_path: Path) -> None:
    said = _run(tmp_path, env={"PROTOCOL": "6"})
    assert [n.message for n in said] == ["refused: it speaks protocol 6, but this host speaks only protocol 5"]
    assert not (tmp_path / "data" / "cache" / "declarations").exists() or not list(
        (tmp_path / "data" / "cache" / "declarations").iterdir()
    )
    _run(tmp_path, env={"PROTOCOL": "6"})
    assert _starts(tmp_path) == 2


def test_a_plugin_refused_at_its_first_use_loses_its_cached_contributions(tmp_path: Path) -> None:
    _run(tmp_path)

    async def scenario(host: PluginHost, registry: Registry) -> None:
        output = await registry.tools["plugin__alpha__echo"].call(ToolCall("c1", {}, "/w", "s", 1))
        assert output.is_error
        assert registry.tools == {} and "alpha-cmd" not in registry.commands
        assert host.status()[0].state == "refused"

    said = _run(tmp_path, scenario, env={"PROTOCOL": "6"})
    assert [n.message for n in said] == ["refused: it speaks protocol 6, but this host speaks only protocol 5"]
    assert list((tmp_path / "data" / "cache" / "declarations").iterdir()) == []


def test_a_plugin_that_observes_is_started_even_on_a_warm_cache(tmp_path: Path) -> None:
    _run(tmp_path, env={"OBSERVES": "1"})

    async def scenario(host: PluginHost, registry: Registry) -> None:
        assert host.status()[0].state == "running"

    _run(tmp_path, scenario, env={"OBSERVES": "1"})
    assert _starts(tmp_path) == 2


def test_a_changed_settings_slice_misses_the_cache(tmp_path: Path) -> None:
    _run(tmp_path)
    _run(tmp_path, settings=Settings(plugins={"alpha": {"mode": "new"}}))
    assert _starts(tmp_path) == 2
    _run(tmp_path, settings=Settings(plugins={"alpha": {"mode": "new"}}))
    assert _starts(tmp_path) == 2


def test_warm_begins_starting_the_plugins_a_command_is_about_to_use(tmp_path: Path) -> None:
    sources = [_source(tmp_path, "alpha"), _source(tmp_path, "beta")]
    _run(tmp_path, sources=sources)

    async def scenario(host: PluginHost, registry: Registry) -> None:
        host.warm("/beta-cmd some args")
        assert [(s.state, s.why) for s in host.status()] == [("idle", "not started yet"), ("idle", "starting")]
        assert await _text(registry, "plugin__beta__echo")() == "echo"
        assert [s.state for s in host.status()] == ["idle", "running"]

    _run(tmp_path, scenario, sources=sources)
    assert (_starts(tmp_path, "alpha"), _starts(tmp_path, "beta")) == (1, 2)


def test_warm_for_a_prompt_starts_no_plugin_that_only_has_tools_and_commands(tmp_path: Path) -> None:
    _run(tmp_path)

    async def scenario(host: PluginHost, registry: Registry) -> None:
        host.warm("how many words?")
        host.warm(None)
        assert host.status()[0].state == "idle"

    _run(tmp_path, scenario)
    assert _starts(tmp_path) == 1
