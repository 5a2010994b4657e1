"""Trust in what a project brings: the fingerprint, the record, the whole-project verdict,
bingo's own writes, and which plugins a run starts (`bridge/trust.py`, ADR-0016)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import threading
from pathlib import Path

import pytest

from bingo.bridge.discovery import PluginSource, discover
from bingo.bridge.fingerprint import fingerprint
from bingo.bridge.trust import (
    TRUST_FILE,
    TrustState,
    admitted,
    ask_trust,
    keep_written,
    remember,
    trust_state,
)
from bingo.kernel.errors import GateError
from bingo.kernel.interfaces import PermissionAnswer
from bingo.kernel.settings import Settings, load_settings
from bingo.wire import Json
from tests.support.summary import record as record_figure


def _install(layer: Path, name: str, script: str = "print('hi')\n", args: list[str] | None = None) -> Path:
    directory = layer / name
    directory.mkdir(parents=True)
    entry = {"command": "python3", "args": args or ["${PLUGIN_ROOT}/main.py"]}
    (directory / "plugin.json").write_text(json.dumps({"name": name, "version": "1.0.0", "entry": entry}))
    (directory / "main.py").write_text(script)
    return directory


class _World:
    def __init__(self, root: Path) -> None:
        self.home = root / "home" / ".bingo"
        self.project = root / "repo"
        self.data = self.home / "data"
        (self.home / "plugins").mkdir(parents=True)
        (self.project / ".bingo" / "plugins").mkdir(parents=True)

    @property
    def user_plugins(self) -> Path:
        return self.home / "plugins"

    @property
    def project_plugins(self) -> Path:
        return self.project / ".bingo" / "plugins"

    def sources(self) -> list[PluginSource]:
        return discover(home=self.home, project=self.project)

    def settings(self) -> Settings:
        return load_settings(home=self.home, project=self.project, project_trusted=False)

    def state(self) -> TrustState:
        return trust_state(
            project=self.project, cwd=self.project, sources=self.sources(), settings=self.settings(), data_dir=self.data
        )

    def trust(self) -> TrustState:
        return remember(self.state(), self.data)

    def source(self, name: str) -> PluginSource:
        [found] = [s for s in self.sources() if s.name == name and s.layer == "project"]
        return found


@pytest.fixture
def world(tmp_path: Path) -> _World:
    return _World(tmp_path)


class _Asker:
    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.questions: list[tuple[str, list[str] | None]] = []

    async def permission(self, name: str, input: Json, always: str) -> PermissionAnswer:
        raise GateError("no person to ask")

    async def ask(self, question: str, choices: list[str] | None) -> str:
        self.questions.append((question, choices))
        if self.answer is None:
            raise GateError("no person to ask")
        return self.answer


def _names(sources: list[PluginSource]) -> list[tuple[str, str]]:
    return [(s.name, s.layer) for s in sources]


# --- the verdict ---------------------------------------------------------------------


def test_a_project_that_brings_nothing_needs_no_trust(world: _World) -> None:
    _install(world.user_plugins, "mine")
    state = world.state()
    assert state.status == "none" and state.trusted
    run, listed = admitted(world.sources(), state)
    assert _names(run) == [("mine", "user")] and listed == []


def test_until_trusted_no_project_plugin_runs_and_user_plugins_do(world: _World) -> None:
    _install(world.user_plugins, "mine")
    _install(world.project_plugins, "theirs")
    state = world.state()
    assert state.status == "untrusted" and state.pending == ("plugin:theirs",)
    run, listed = admitted(world.sources(), state)
    assert _names(run) == [("mine", "user")]
    assert [(s.name, why) for s, why in listed] == [
        ("theirs", "the project is not trusted: run bingo --trust to trust it")
    ]


def test_an_untrusted_project_plugin_hides_nothing(world: _World) -> None:
    _install(world.user_plugins, "guard")
    (world.project_plugins / "guard").mkdir()  # not even a manifest
    run, _ = admitted(world.sources(), world.state())
    assert _names(run) == [("guard", "user")]


def test_a_trusted_project_plugin_wins_its_name_and_the_hidden_one_is_listed(world: _World) -> None:
    _install(world.user_plugins, "guard")
    _install(world.project_plugins, "guard")
    run, listed = admitted(world.sources(), world.trust())
    assert _names(run) == [("guard", "project")]
    assert [(s.layer, why) for s, why in listed] == [("user", "hidden by the project's plugin of that name")]


def test_one_change_anywhere_leaves_out_every_project_plugin(world: _World) -> None:
    _install(world.project_plugins, "a")
    _install(world.project_plugins, "b")
    world.trust()
    (world.project / ".bingo" / "settings.json").write_text('{"model": "other"}')
    state = world.state()
    assert state.status == "changed" and state.pending == ("settings.json",)
    run, listed = admitted(world.sources(), state)
    assert run == [] and [s.name for s, _ in listed] == ["a", "b"]


def test_settings_that_only_tighten_need_no_trust(world: _World) -> None:
    (world.project / ".bingo" / "settings.json").write_text('{"permissions": {"deny": ["bash"], "ask": ["read"]}}')
    assert world.state().status == "none"
    (world.project / ".bingo" / "settings.json").write_text('{"permissions": {"deny": ["bash"], "allow": ["read"]}}')
    state = world.state()
    assert state.pending == ("settings.json",)
    [item] = state.items
    assert item.label == ".bingo/settings.json: permissions.allow"


def test_an_mcp_file_is_brought_and_named_by_its_servers(world: _World) -> None:
    (world.project / ".mcp.json").write_text('{"mcpServers": {"fs": {"command": "x"}, "db": {"command": "y"}}}')
    state = world.state()
    assert state.pending == (".mcp.json",)
    assert [item.label for item in state.items] == [".mcp.json: servers db, fs"]


def test_trust_is_kept_by_the_projects_resolved_path(world: _World, tmp_path: Path) -> None:
    _install(world.project_plugins, "theirs")
    world.trust()
    link = tmp_path / "alias"
    link.symlink_to(world.project)
    state = trust_state(
        project=link,
        cwd=link,
        sources=discover(home=world.home, project=link),
        settings=world.settings(),
        data_dir=world.data,
    )
    assert state.status == "trusted"
    record = json.loads((world.data / TRUST_FILE).read_text())
    assert list(record["projects"]) == [str(world.project.resolve())]
    assert record["version"] == 2


def test_a_damaged_or_older_record_trusts_nothing(world: _World) -> None:
    _install(world.project_plugins, "theirs")
    world.data.mkdir(parents=True)
    (world.data / TRUST_FILE).write_text("{not json")
    assert world.state().status == "untrusted"
    (world.data / TRUST_FILE).write_text(
        json.dumps({"version": 1, "projects": {str(world.project.resolve()): {"plugins": {}}}})
    )
    assert world.state().status == "untrusted"
    world.trust()
    assert world.state().status == "trusted"


def test_concurrent_trusts_of_two_projects_keep_both(world: _World, tmp_path: Path) -> None:
    other = _World(tmp_path / "second")
    other.data = world.data
    _install(world.project_plugins, "a")
    _install(other.project_plugins, "b")
    barrier = threading.Barrier(8)

    def trust(w: _World) -> None:
        barrier.wait(5)
        w.trust()

    threads = [threading.Thread(target=trust, args=(w,)) for w in [world, other] * 4]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert world.state().status == "trusted"
    assert other.state().status == "trusted"


def test_an_asker_that_cannot_answer_is_a_no(world: _World) -> None:
    _install(world.project_plugins, "theirs")
    assert asyncio.run(ask_trust(_Asker(None), world.state())) is False
    asker = _Asker("yes")
    assert asyncio.run(ask_trust(asker, world.state())) is True
    [(question, choices)] = asker.questions
    assert choices == ["yes", "no"]
    assert question.splitlines()[1:] == ["  plugin theirs (new)", "Trust them and use them?"]


# --- the fingerprint -----------------------------------------------------------------


def test_the_fingerprint_sees_every_file_caches_and_dot_directories_included(world: _World) -> None:
    directory = _install(world.project_plugins, "theirs")
    seen = {fingerprint(world.source("theirs"), world.project).digest}
    for path in ["__pycache__/main.cpython-311.pyc", ".git/hook", ".mypy_cache/x", "deep/er/main.pyc"]:
        (directory / path).parent.mkdir(parents=True, exist_ok=True)
        (directory / path).write_bytes(b"\0")
        seen.add(fingerprint(world.source("theirs"), world.project).digest)
    assert len(seen) == 5


def test_the_fingerprint_is_the_same_for_the_same_bytes(world: _World) -> None:
    _install(world.project_plugins, "theirs")
    first = fingerprint(world.source("theirs"), world.project)
    assert first.digest is not None and first.problem is None
    assert fingerprint(world.source("theirs"), world.project) == first


def test_an_executable_bit_is_a_change(world: _World) -> None:
    directory = _install(world.project_plugins, "theirs")
    before = fingerprint(world.source("theirs"), world.project).digest
    (directory / "main.py").chmod(0o755)
    assert fingerprint(world.source("theirs"), world.project).digest != before


def test_a_link_cycle_is_walked_once(world: _World) -> None:
    directory = _install(world.project_plugins, "theirs")
    (directory / "loop").symlink_to(".", target_is_directory=True)
    found = fingerprint(world.source("theirs"), world.project)
    assert found.digest is not None and found.outside == ()


def test_a_link_out_of_the_project_is_named_and_its_target_hashed(world: _World, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "lib.py").write_text("A = 1\n")
    directory = _install(world.project_plugins, "theirs")
    (directory / "lib").symlink_to(outside, target_is_directory=True)
    first = fingerprint(world.source("theirs"), world.project)
    assert first.outside == (f"./lib -> {outside.resolve()}",)
    (outside / "lib.py").write_text("A = 2\n")
    assert fingerprint(world.source("theirs"), world.project).digest != first.digest


def test_entry_paths_in_args_and_env_are_hashed_inside_the_project(world: _World) -> None:
    (world.project / "lib").mkdir()
    (world.project / "lib" / "mod.py").write_text("A = 1\n")
    (world.project / "run.py").write_text("print(1)\n")
    _install(world.project_plugins, "theirs", args=["--script=${PLUGIN_ROOT}/../../../run.py"])
    manifest = world.project_plugins / "theirs" / "plugin.json"
    body = json.loads(manifest.read_text())
    body["entry"]["env"] = {"PYTHONPATH": "/nowhere:${PLUGIN_ROOT}/../../../lib"}
    manifest.write_text(json.dumps(body))
    first = fingerprint(world.source("theirs"), world.project).digest
    (world.project / "run.py").write_text("print(2)\n")
    second = fingerprint(world.source("theirs"), world.project).digest
    (world.project / "lib" / "mod.py").write_text("A = 2\n")
    third = fingerprint(world.source("theirs"), world.project).digest
    assert len({first, second, third}) == 3


def test_a_fifo_is_recorded_never_opened(world: _World) -> None:
    directory = _install(world.project_plugins, "theirs")
    os.mkfifo(directory / "pipe")
    assert fingerprint(world.source("theirs"), world.project).digest is not None


def _fingerprint_as(source: PluginSource, cwd: Path, uid: int | None) -> tuple[bool, str]:
    """Whether `source` has no digest, and why, as `uid` when given (in a forked child: root
    reads anything, so an unreadable file is only unreadable to another user)."""
    if uid is None:
        found = fingerprint(source, cwd)
        return found.digest is None, found.problem or ""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read)
        try:
            os.setuid(uid)
            found = fingerprint(source, cwd)
            said = f"{found.digest is None}\n{found.problem or ''}"
        except BaseException as exc:
            said = f"unexpected\n{type(exc).__name__}: {exc}"
        os.write(write, said.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        none, _, problem = pipe.read().decode().partition("\n")
    os.waitpid(pid, 0)
    return none == "True", problem


def test_an_unreadable_file_means_no_digest(tmp_path: Path) -> None:
    shared = Path(tempfile.mkdtemp(prefix="bingo-unreadable-"))  # a tree another user may walk
    try:
        world = _World(shared)
        directory = _install(world.project_plugins, "theirs")
        (directory / "secret").write_text("x")
        (directory / "secret").chmod(0)
        for path in [shared, *shared.rglob("*")]:
            if path.is_dir():
                path.chmod(0o755)
        none, problem = _fingerprint_as(world.source("theirs"), world.project, 65534 if os.geteuid() == 0 else None)
        assert none and "cannot be read" in problem, problem
    finally:
        shutil.rmtree(shared, ignore_errors=True)


# --- bingo's own writes --------------------------------------------------------------


def test_a_file_bingo_writes_in_a_project_with_nothing_stays_trusted(world: _World) -> None:
    after = b'{"permissions": {"allow": ["bash"]}}\n'
    (world.project / ".bingo" / "settings.local.json").write_bytes(after)
    assert keep_written(world.data, world.project, "settings.local.json", None, after, untrusted_keys=False)
    assert world.state().status == "trusted"


def test_a_write_over_untrusted_settings_does_not_launder_them(world: _World) -> None:
    before = b'{"permissions": {"allow": ["*"]}}\n'
    after = b'{"permissions": {"allow": ["*", "bash"]}}\n'
    (world.project / ".bingo" / "settings.local.json").write_bytes(after)
    assert not keep_written(world.data, world.project, "settings.local.json", before, after, untrusted_keys=True)
    assert world.state().status == "untrusted"


def test_a_write_over_trusted_settings_keeps_the_project_trusted(world: _World) -> None:
    path = world.project / ".bingo" / "settings.local.json"
    before = b'{"permissions": {"allow": ["read"]}}\n'
    path.write_bytes(before)
    _install(world.project_plugins, "theirs")
    world.trust()
    after = b'{"permissions": {"allow": ["read", "bash"]}}\n'
    path.write_bytes(after)
    assert keep_written(world.data, world.project, "settings.local.json", before, after, untrusted_keys=True)
    assert world.state().status == "trusted"


def test_the_question_shows_each_servers_command_line_or_url_and_what_it_reads(world: _World) -> None:
    from bingo.bridge.trust import trust_question

    servers = {
        "fs": {"command": "npx", "args": ["-y", "server-filesystem", "/my data"]},
        "web": {"type": "http", "url": "https://x.example/mcp", "headers": {"A": "Bearer ${API_KEY}"}},
    }
    (world.project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    assert trust_question(world.state()).splitlines()[1:4] == [
        "  .mcp.json: servers fs, web (new)",
        "    fs: npx -y server-filesystem '/my data'",
        "    web: https://x.example/mcp; reads ${API_KEY} (${API_KEY} not in your mcpVariables: left out until listed)",
    ]


def test_a_mcp_json_server_pins_the_directory_of_its_script_not_the_directory_it_works_in(world: _World) -> None:
    (world.project / "srv").mkdir()
    (world.project / "srv" / "main.py").write_text("import helper\n")
    (world.project / "srv" / "helper.py").write_text("x = 1\n")
    (world.project / "data").mkdir()
    (world.project / "server.py").write_text("pass\n")
    (world.project / "util.py").write_text("pass\n")
    (world.project / "README.md").write_text("read me\n")
    servers = {
        "a": {"command": "python3", "args": ["srv/main.py", "data"]},
        "b": {"command": "python3", "args": ["server.py"]},
    }
    (world.project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    before = world.trust()
    assert before.trusted
    (world.project / "data" / "new.txt").write_text("work\n")
    (world.project / "README.md").write_text("edited\n")
    assert world.state().trusted, "the place a server works in, and a root file of another kind, are not its code"
    for changed in ("srv/helper.py", "util.py"):
        (world.project / changed).write_text("changed = True\n")
        assert world.state().pending == (".mcp.json",), changed
        world.trust()


# --- which file changed (ADR-0033) ---------------------------------------------------


def test_always_in_a_project_never_trusted_leaves_it_never_trusted(world: _World) -> None:
    (world.project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"t": {"command": "uvx", "args": ["mcp-server-time"]}}})
    )
    after = b'{"permissions": {"allow": ["bash"]}}\n'
    (world.project / ".bingo" / "settings.local.json").write_bytes(after)
    assert keep_written(world.data, world.project, "settings.local.json", None, after, untrusted_keys=False)
    state = world.state()
    assert state.status == "untrusted" and state.pending == (".mcp.json",)
    # A second write keeps it bingo's own, still never trusted; the person's trust ends that.
    again = b'{"permissions": {"allow": ["bash", "read"]}}\n'
    (world.project / ".bingo" / "settings.local.json").write_bytes(again)
    assert keep_written(world.data, world.project, "settings.local.json", after, again, untrusted_keys=True)
    assert world.state().status == "untrusted"
    world.trust()
    (world.project / ".mcp.json").write_text("{}")
    assert world.state().status == "changed"


def test_a_change_is_named_by_file_new_and_gone_ones_too_and_directories_only_when_nothing_below_is(
    world: _World,
) -> None:
    from bingo.bridge.trust import changed_paths, left_out_notice, trust_question, trust_summary

    plugin = _install(world.project_plugins, "p")
    (plugin / "lib").mkdir()
    (plugin / "lib" / "a.py").write_text("a\n")
    (plugin / "lib" / "gone.py").write_text("g\n")
    world.trust()
    (plugin / "lib" / "a.py").write_text("a, changed\n")
    (plugin / "lib" / "gone.py").unlink()
    (plugin / "lib" / "new.py").write_text("n\n")
    (plugin / "empty").mkdir()
    state = world.state()
    assert state.status == "changed"
    assert changed_paths(state) == [
        ".bingo/plugins/p/empty",
        ".bingo/plugins/p/lib/a.py",
        ".bingo/plugins/p/lib/gone.py",
        ".bingo/plugins/p/lib/new.py",
    ]
    assert (
        "changed since you trusted it (.bingo/plugins/p/empty, .bingo/plugins/p/lib/a.py, .bingo/plugins/p/lib/gone.py and 1 more)"
        in left_out_notice(state, world.sources())
    )
    assert (
        "    changed: .bingo/plugins/p/empty, .bingo/plugins/p/lib/a.py, .bingo/plugins/p/lib/gone.py and 1 more"
        in trust_question(state).splitlines()
    )
    assert (
        "(.bingo/plugins/p/empty, .bingo/plugins/p/lib/a.py, .bingo/plugins/p/lib/gone.py and 1 more changed)"
        in trust_summary(state)
    )


def test_a_record_from_before_names_the_item_whole(world: _World) -> None:
    from bingo.bridge.trust import changed_paths

    _install(world.project_plugins, "p")
    world.trust()
    before = json.loads((world.data / TRUST_FILE).read_text())
    for project in before["projects"].values():
        del project["files"]
    (world.data / TRUST_FILE).write_text(json.dumps(before))
    (world.project_plugins / "p" / "main.py").write_text("changed\n")
    assert changed_paths(world.state()) == ["plugin p"]


def test_what_the_record_keeps_per_item_is_bounded_by_directory_then_not_at_all() -> None:
    from bingo.bridge._trust_item import _FILES_KEPT, _bounded  # pyright: ignore[reportPrivateUsage]

    few = [(f"p/{n}.py", "0" * 16) for n in range(_FILES_KEPT)]
    assert _bounded(few) == tuple(few)
    many = [(f"p/node_modules/m{n // 100}/sub/f{n}.js", f"{n:016x}") for n in range(20_000)]
    kept = _bounded(many)
    assert len(kept) == 200 and kept[0][0] == "p/node_modules/m0/sub"  # two levels below what all share
    changed = list(many)
    changed[150] = (changed[150][0], "f" * 16)
    assert [path for (path, a), (_, b) in zip(kept, _bounded(changed)) if a != b] == ["p/node_modules/m1/sub"]
    flat = [(f"f{n}.js", "0" * 16) for n in range(_FILES_KEPT + 1)]
    assert _bounded(flat) == ()


def test_a_large_plugin_is_named_by_directory_and_the_record_stays_small(world: _World) -> None:
    from bingo.bridge.trust import changed_paths

    plugin = _install(world.project_plugins, "big")
    for package in range(40):
        directory = plugin / "node_modules" / f"pkg{package}" / "lib"
        directory.mkdir(parents=True)
        for n in range(30):
            (directory / f"f{n}.js").write_text(f"{package} {n}\n")
    world.trust()
    size = (world.data / TRUST_FILE).stat().st_size
    record_figure("trust record", "trust.json for a 1,201-file project plugin (bytes)", size)
    assert size < 16_000
    (plugin / "node_modules" / "pkg7" / "lib" / "f3.js").write_text("changed\n")
    assert changed_paths(world.state()) == [".bingo/plugins/big/node_modules/pkg7/lib"]


def test_a_directory_a_plugin_is_told_to_work_in_is_not_pinned_one_it_loads_code_from_is(world: _World) -> None:
    (world.project / "src").mkdir()
    (world.project / "src" / "app.py").write_text("a = 1\n")
    (world.project / "lib").mkdir()
    (world.project / "lib" / "mod.py").write_text("A = 1\n")
    args = ["${PLUGIN_ROOT}/main.py", "--repository", ".", "--root=${PLUGIN_ROOT}/../../..", "--data", "src"]
    _install(world.project_plugins, "theirs", args=args)
    manifest = world.project_plugins / "theirs" / "plugin.json"
    body = json.loads(manifest.read_text())
    body["entry"]["env"] = {"PYTHONPATH": "${PLUGIN_ROOT}/../../../lib"}
    manifest.write_text(json.dumps(body))
    first = fingerprint(world.source("theirs"), world.project).digest
    (world.project / "src" / "app.py").write_text("a = 2\n")
    (world.project / "src" / "new.py").write_text("b = 1\n")
    assert fingerprint(world.source("theirs"), world.project).digest == first
    (world.project / "lib" / "mod.py").write_text("A = 2\n")
    assert fingerprint(world.source("theirs"), world.project).digest != first


def test_a_server_script_kept_in_dot_bingo_does_not_pin_what_bingo_writes_there(world: _World) -> None:
    (world.project / ".bingo" / "server.py").write_text("pass\n")
    (world.project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"s": {"command": "python3", "args": [".bingo/server.py"]}}})
    )
    world.trust()
    after = b'{"permissions": {"allow": ["bash"]}}\n'
    (world.project / ".bingo" / "settings.local.json").write_bytes(after)
    (world.project / ".bingo" / ".gitignore").write_text("settings.local.json\n")
    assert keep_written(world.data, world.project, "settings.local.json", None, after, untrusted_keys=False)
    assert world.state().trusted
    (world.project / ".bingo" / "server.py").write_text("changed = True\n")
    assert world.state().pending == (".mcp.json",)


def test_a_file_name_that_is_not_utf8_is_trusted_and_named_with_its_bytes_shown(world: _World) -> None:
    from bingo.bridge.trust import changed_paths

    plugin = _install(world.project_plugins, "p")
    odd = os.path.join(os.fsencode(plugin), b"odd\xff.py")
    with open(odd, "wb") as file:
        file.write(b"a\n")
    world.trust()
    assert world.state().trusted
    with open(odd, "wb") as file:
        file.write(b"b\n")
    assert changed_paths(world.state()) == [".bingo/plugins/p/odd\\xff.py"]
