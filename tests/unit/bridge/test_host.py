"""The plugin host with real child processes: tiny Python plugins written into tmp_path."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from bingo.bridge import PluginHost, PluginSource, process
from bingo.bridge._backoff import Backoff
from bingo.bridge.manifest import Entry, Manifest
from bingo.kernel.errors import PluginError, PluginUnavailable
from bingo.kernel.interfaces import ToolCall
from bingo.kernel.notices import Notices
from bingo.kernel.registry import Registry
from bingo.kernel.settings import Settings
from bingo.wire import Notice, TextPart, ToolOutput

_PLUGIN = textwrap.dedent(
    """
    import json, os, sys, time
    NAME, PROTOCOL = sys.argv[1], int(sys.argv[2])
    def send(message):
        sys.stdout.write(json.dumps(dict(message, jsonrpc="2.0")) + "\\n")
        sys.stdout.flush()
    init = None
    for line in sys.stdin:
        message = json.loads(line)
        method, params = message.get("method"), message.get("params")
        if method == "initialize":
            init = params
            if NAME == "dies-at-init":
                with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "starts"), "a") as f:
                    f.write("start\\n")
                os._exit(4)
            send({"id": message["id"], "result": {
                "protocol": PROTOCOL, "name": NAME, "version": "1.2.3",
                "tools": [{"name": "echo", "inputSchema": {"type": "object"}, "traits": {"trusted": True}}],
                "services": [{"key": "bingo.mine", "methods": []}, {"key": "shared", "methods": ["get"]}],
            }})
        elif method == "tool/call":
            command = params["input"]
            if command == "die":
                print("about to die", file=sys.stderr, flush=True)
                os._exit(3)
            if command == "stray":
                print("hello from print()", flush=True)
                print("and again", flush=True)
            if command == "fork":
                pid = os.fork()
                if pid == 0:
                    time.sleep(60)
                    os._exit(0)
                command = pid
            if command == "init":
                command = init
            send({"id": message["id"], "result": {"output": {"parts": [{"type": "text", "text": json.dumps(command)}]}}})
    """
)


class Clock:
    """A clock the test moves by hand, so backoff needs no real waiting."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _source(tmp_path: Path, name: str, *, answers: str | None = None, protocol: int = 5) -> PluginSource:
    root = tmp_path / "plugins" / name
    root.mkdir(parents=True)
    (root / "main.py").write_text(_PLUGIN, encoding="utf-8")
    entry = Entry(command=sys.executable, args=["${PLUGIN_ROOT}/main.py", answers or name, str(protocol)])
    return PluginSource(
        name=name,
        layer="user",
        root=root,
        manifest=Manifest(name=name, version="0.1", entry=entry),
        problem=None,
        base=root.parent,
    )


Scenario = Callable[[PluginHost, Registry], Awaitable[None]]


def _run(
    tmp_path: Path, sources: list[PluginSource], scenario: Scenario, *, clock: Clock | None = None
) -> list[Notice]:
    notices = Notices()
    said: list[Notice] = []
    notices.listen(said.append)
    settings = Settings(plugins={"alpha": {"greeting": "hi"}})

    async def main() -> None:
        registry = Registry(notices)
        async with (
            asyncio.timeout(10),
            PluginHost(
                sources=sources,
                registry=registry,
                notices=notices,
                settings=settings,
                data_dir=tmp_path / "data",
                cwd=tmp_path,
                clock=clock,
                backoff=Backoff(first=1.0, cap=4.0, reset_after=60.0),
            ) as host,
        ):
            await host.start()
            await scenario(host, registry)

    asyncio.run(main())
    return said


def _text(output: ToolOutput) -> str:
    part = output.parts[0]
    assert isinstance(part, TextPart)
    return part.text


async def _call(registry: Registry, name: str, value: object, call_id: str = "c1") -> ToolOutput:
    return await registry.tools[name].call(ToolCall(call_id, value, "/w", "s", 1))


def test_start_handshakes_and_registers_the_plugins_tools_under_bridged_names(tmp_path: Path) -> None:
    async def scenario(host: PluginHost, registry: Registry) -> None:
        assert sorted(registry.tools) == ["plugin__alpha__echo", "plugin__beta__echo"]
        init = await _call(registry, "plugin__alpha__echo", "init")
        assert '"config": {"greeting": "hi"}' in _text(init)
        assert f'"dataDir": "{tmp_path / "data" / "plugins" / "alpha"}"' in _text(init)
        assert '"protocol": 5' in _text(init)
        [alpha, beta] = host.status()
        assert (alpha.name, alpha.state, alpha.version, alpha.why) == ("alpha", "running", "1.2.3", None)
        assert alpha.contributes == ("tool plugin__alpha__echo", "service shared")
        assert beta.contributes == ("tool plugin__beta__echo",)

    said = _run(tmp_path, [_source(tmp_path, "beta"), _source(tmp_path, "alpha")], scenario)
    # bingo.* keys are refused; the second declarer of "shared" (in name order) loses it
    # A claimed trait is not believed, and the plugin is told its key means nothing.
    claimed = [n.source for n in said if n.message.startswith("tool echo has unknown key traits")]
    assert sorted(claimed) == ["alpha", "beta"]
    assert [(n.source, n.message) for n in said if n.source not in claimed or "traits" not in n.message] == [
        ("alpha", "service 'bingo.mine' refused: keys starting 'bingo.' are reserved for the host"),
        ("beta", "service 'bingo.mine' refused: keys starting 'bingo.' are reserved for the host"),
        ("beta", "service 'shared' is already provided by alpha; this one is not used"),
    ]


def test_a_protocol_or_name_the_host_does_not_accept_is_refused_with_a_notice(tmp_path: Path) -> None:
    async def scenario(host: PluginHost, registry: Registry) -> None:
        assert registry.tools == {}
        states = [(s.name, s.state) for s in host.status()]
        assert states == [("newer", "refused"), ("renamed", "refused")]

    said = _run(
        tmp_path, [_source(tmp_path, "newer", protocol=6), _source(tmp_path, "renamed", answers="other")], scenario
    )
    # the two handshakes run at once: their notices come in either order
    assert sorted(n.message for n in said) == [
        "refused: it speaks protocol 6, but this host speaks only protocol 5",
        "refused: its handshake says it is 'other', but its manifest says 'renamed'",
    ]


def test_a_death_fails_the_call_in_words_then_respawns_at_the_next_call_at_once(tmp_path: Path) -> None:
    clock = Clock()
    log = tmp_path / "data" / "logs" / "plugin-alpha.log"

    async def scenario(host: PluginHost, registry: Registry) -> None:
        with pytest.raises(PluginError) as died:
            await _call(registry, "plugin__alpha__echo", "die")
        assert died.value.message == "plugin alpha exited with code 3"
        # Its last words are the notice's alone (below): said once (issue 26).
        assert died.value.hint == f"log: {log}"
        assert host.status()[0].state == "stopped"
        # It had completed its handshake: no backoff (INTERFACE.md §5), the clock unmoved.
        assert _text(await _call(registry, "plugin__alpha__echo", "hi")) == '"hi"'
        assert host.status()[0].state == "running"
        # and again after a second quick death
        with pytest.raises(PluginError):
            await _call(registry, "plugin__alpha__echo", "die")
        assert _text(await _call(registry, "plugin__alpha__echo", "hi")) == '"hi"'

    said = _run(tmp_path, [_source(tmp_path, "alpha")], scenario, clock=clock)
    deaths = [n for n in said if n.message.startswith("stopped:")]
    assert len(deaths) == 2 and deaths[0].source == "alpha"
    assert (
        deaths[0].message
        == f"stopped: plugin alpha exited with code 3: its last stderr line: 'about to die'; log: {log}"
    )
    assert "about to die" in log.read_text(encoding="utf-8")


def test_stray_stdout_goes_to_the_log_with_one_notice_and_the_call_goes_on(tmp_path: Path) -> None:
    async def scenario(host: PluginHost, registry: Registry) -> None:
        assert _text(await _call(registry, "plugin__alpha__echo", "stray")) == '"stray"'
        assert _text(await _call(registry, "plugin__alpha__echo", "stray", "c2")) == '"stray"'

    said = _run(tmp_path, [_source(tmp_path, "alpha")], scenario)
    strays = [n for n in said if "not part of the protocol" in n.message]
    assert len(strays) == 1 and "bingo ignored it (see " in strays[0].message
    log = (tmp_path / "data" / "logs" / "plugin-alpha.log").read_text(encoding="utf-8")
    assert "hello from print()" in log and "and again" in log


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended


def test_leaving_the_host_leaves_no_plugin_process_nor_its_children(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the grandchild ignores the closed stdin: only the group's SIGTERM ends it
    monkeypatch.setattr(process, "EXIT_GRACE", 0.2)
    pids: list[int] = []

    async def scenario(host: PluginHost, registry: Registry) -> None:
        pids.append(int(_text(await _call(registry, "plugin__alpha__echo", "fork"))))
        assert _alive(pids[0])

    _run(tmp_path, [_source(tmp_path, "alpha")], scenario)
    assert not _alive(pids[0])


def test_a_source_with_a_problem_is_refused_with_its_words(tmp_path: Path) -> None:
    broken = PluginSource(
        name="broken", layer="project", root=tmp_path, manifest=None, problem="plugin.json: bad", base=tmp_path
    )

    async def scenario(host: PluginHost, registry: Registry) -> None:
        [status] = host.status()
        assert (status.state, status.why, status.layer) == ("refused", "plugin.json: bad", "project")

    said = _run(tmp_path, [broken], scenario)
    assert said == [Notice(source="broken", message="refused: plugin.json: bad", level="warning")]
    assert os.path.exists(tmp_path)


def test_a_plugin_that_dies_in_its_handshake_backs_off_instead_of_respawning_at_every_use(tmp_path: Path) -> None:
    clock = Clock()
    source = _source(tmp_path, "dies-at-init")
    starts = source.root / "starts"

    async def scenario(host: PluginHost, registry: Registry) -> None:
        plugin = host._plugins["dies-at-init"]  # pyright: ignore[reportPrivateUsage]
        assert starts.read_text().split() == ["start"]
        for _ in range(3):  # within the backoff: nothing is spawned, the answer is at once
            with pytest.raises(PluginUnavailable) as caught:
                await plugin.connection()
            assert "after a pause" in caught.value.line()
        assert starts.read_text().split() == ["start"]
        clock.now += 1.5  # past the first delay (1 s): one more try, which fails again
        with pytest.raises(PluginUnavailable):
            await plugin.connection()
        assert starts.read_text().split() == ["start", "start"]
        clock.now += 1.5  # the second delay is 2 s: still waiting
        with pytest.raises(PluginUnavailable) as caught:
            await plugin.connection()
        assert "after a pause" in caught.value.line()
        assert starts.read_text().split() == ["start", "start"]

    _run(tmp_path, [source], scenario, clock=clock)
