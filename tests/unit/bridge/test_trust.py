"""Trust in project plugins: the fingerprint, the record, the verdict, and who gets started."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path

import pytest

from bingo.bridge.discovery import PluginSource, discover
from bingo.bridge.trust import (
    TRUST_FILE,
    admit,
    admitted,
    ask_trust,
    fingerprint,
    remember,
    skip_notice,
    trust_line,
    trust_state,
)
from bingo.kernel.errors import GateError
from bingo.kernel.notices import Notices
from bingo.kernel.turn import PermissionAnswer
from bingo.wire import Json, Notice


def _install(layer: Path, name: str, script: str = "print('hi')\n") -> Path:
    directory = layer / name
    directory.mkdir(parents=True)
    body = {"name": name, "version": "1.0.0", "entry": {"command": "python3", "args": ["${PLUGIN_ROOT}/main.py"]}}
    (directory / "plugin.json").write_text(json.dumps(body))
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


@pytest.fixture
def world(tmp_path: Path) -> _World:
    return _World(tmp_path)


class _Asker:
    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.questions: list[tuple[str, list[str] | None]] = []

    async def permission(self, name: str, input: Json) -> PermissionAnswer:
        raise GateError("no person to ask")

    async def ask(self, question: str, choices: list[str] | None) -> str:
        self.questions.append((question, choices))
        if self.answer is None:
            raise GateError("no person to ask")
        return self.answer


def _heard(notices: Notices) -> list[Notice]:
    heard: list[Notice] = []
    notices.listen(heard.append)
    return heard


def test_a_project_without_plugins_needs_no_trust(world: _World) -> None:
    _install(world.user_plugins, "mine")
    state = trust_state(world.project, world.sources(), world.data)
    assert state.status == "none" and state.pending == ()
    assert admitted(world.sources(), state) == world.sources()


def test_user_plugins_never_need_trust(world: _World) -> None:
    _install(world.user_plugins, "mine")
    _install(world.project_plugins, "theirs")
    state = trust_state(world.project, world.sources(), world.data)
    assert state.status == "untrusted" and state.pending == ("theirs",)
    assert [s.name for s in admitted(world.sources(), state)] == ["mine"]


def test_remembered_plugins_are_trusted_until_they_change(world: _World) -> None:
    directory = _install(world.project_plugins, "theirs")
    trusted = remember(world.project, world.sources(), world.data)
    assert trusted.status == "trusted"
    assert trust_state(world.project, world.sources(), world.data).status == "trusted"
    (directory / "main.py").write_text("print('changed')\n")
    state = trust_state(world.project, world.sources(), world.data)
    assert state.status == "changed" and state.pending == ("theirs",)


def test_a_new_plugin_in_a_trusted_project_is_pending_and_the_others_still_start(world: _World) -> None:
    _install(world.project_plugins, "first")
    remember(world.project, world.sources(), world.data)
    _install(world.project_plugins, "second")
    state = trust_state(world.project, world.sources(), world.data)
    assert state.status == "changed" and state.pending == ("second",)
    assert [s.name for s in admitted(world.sources(), state)] == ["first"]


def test_a_pending_project_plugin_keeps_its_name_from_the_users_plugin(world: _World) -> None:
    _install(world.user_plugins, "same")
    _install(world.project_plugins, "same")
    state = trust_state(world.project, world.sources(), world.data)
    assert state.pending == ("same",)
    assert admitted(world.sources(), state) == []


def test_trust_is_kept_by_the_projects_path(world: _World, tmp_path: Path) -> None:
    _install(world.project_plugins, "theirs")
    remember(world.project, world.sources(), world.data)
    other = tmp_path / "copy"
    (other / ".bingo").mkdir(parents=True)
    os.rename(world.project_plugins, other / ".bingo" / "plugins")
    sources = discover(home=world.home, project=other)
    assert trust_state(other, sources, world.data).status == "untrusted"


def test_the_fingerprint_skips_caches_and_sees_every_other_file(world: _World) -> None:
    directory = _install(world.project_plugins, "theirs")
    [source] = world.sources()
    before = fingerprint(source)
    (directory / "__pycache__").mkdir()
    (directory / "__pycache__" / "main.cpython-311.pyc").write_bytes(b"\0")
    (directory / "other.pyc").write_bytes(b"\0")
    assert fingerprint(source) == before
    (directory / "lib").mkdir()
    (directory / "lib" / "helper.py").write_text("x = 1\n")
    with_helper = fingerprint(source)
    assert with_helper != before
    (directory / "lib" / "helper.py").chmod(0o755)
    assert fingerprint(source) != with_helper


def test_an_entry_file_outside_the_plugin_is_part_of_the_fingerprint(world: _World, tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("print(1)\n")
    directory = world.project_plugins / "theirs"
    directory.mkdir()
    manifest = {"name": "theirs", "version": "1", "entry": {"command": "python3", "args": [str(outside)]}}
    (directory / "plugin.json").write_text(json.dumps(manifest))
    [source] = world.sources()
    before = fingerprint(source)
    outside.write_text("print(2)\n")
    assert fingerprint(source) != before


def test_the_record_is_written_whole_and_keyed_by_resolved_path(world: _World) -> None:
    _install(world.project_plugins, "theirs")
    remember(world.project, world.sources(), world.data)
    record = json.loads((world.data / TRUST_FILE).read_text())
    assert list(record["projects"]) == [str(world.project.resolve())]
    assert set(record["projects"][str(world.project.resolve())]["plugins"]) == {"theirs"}
    assert [p.name for p in world.data.iterdir() if p.name.endswith(".tmp")] == []


def test_a_damaged_record_trusts_nothing_and_is_replaced_by_the_next_trust(world: _World) -> None:
    _install(world.project_plugins, "theirs")
    world.data.mkdir(parents=True)
    (world.data / TRUST_FILE).write_text("{not json")
    assert trust_state(world.project, world.sources(), world.data).status == "untrusted"
    remember(world.project, world.sources(), world.data)
    assert trust_state(world.project, world.sources(), world.data).status == "trusted"


def test_concurrent_trusts_of_two_projects_keep_both(world: _World, tmp_path: Path) -> None:
    other = _World(tmp_path / "second")
    _install(world.project_plugins, "a")
    _install(other.project_plugins, "b")
    barrier = threading.Barrier(8)

    def trust(w: _World) -> None:
        barrier.wait(5)
        remember(w.project, w.sources(), world.data)

    threads = [threading.Thread(target=trust, args=(w,)) for w in [world, other] * 4]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert trust_state(world.project, world.sources(), world.data).status == "trusted"
    assert trust_state(other.project, other.sources(), world.data).status == "trusted"


def test_the_skip_notice_says_how_to_trust(world: _World) -> None:
    _install(world.project_plugins, "theirs")
    state = trust_state(world.project, world.sources(), world.data)
    assert skip_notice(state) == (
        f"project plugins not started (theirs): {world.project} is not a trusted project; "
        f"run bingo --trust in {world.project} to trust them"
    )


def test_the_trust_line_names_what_was_trusted(world: _World) -> None:
    assert trust_line(remember(world.project, world.sources(), world.data)) == (
        f"{world.project} has no plugins of its own (.bingo/plugins/): nothing to trust"
    )
    assert not (world.data / TRUST_FILE).exists()
    _install(world.project_plugins, "b")
    _install(world.project_plugins, "a")
    assert trust_line(remember(world.project, world.sources(), world.data)) == (
        f"trusted 2 plugins of {world.project} as they are now: a, b"
    )


def test_without_a_person_untrusted_plugins_are_skipped_with_one_notice(world: _World) -> None:
    _install(world.project_plugins, "a")
    _install(world.project_plugins, "b")
    _install(world.user_plugins, "mine")
    notices = Notices()
    heard = _heard(notices)
    sources = asyncio.run(admit(project=world.project, sources=world.sources(), data_dir=world.data, notices=notices, asker=None))
    assert [s.name for s in sources] == ["mine"]
    assert [(n.source, n.level) for n in heard] == [("bingo", "warning")]
    assert "(a, b)" in heard[0].message and "bingo --trust" in heard[0].message


def test_a_yes_on_a_terminal_is_remembered_and_asked_only_once(world: _World) -> None:
    _install(world.project_plugins, "theirs")
    asker = _Asker("yes")
    notices = Notices()
    heard = _heard(notices)

    async def twice() -> tuple[list[PluginSource], list[PluginSource]]:
        async with asyncio.timeout(5):
            first = await admit(project=world.project, sources=world.sources(), data_dir=world.data, notices=notices, asker=asker)
            second = await admit(project=world.project, sources=world.sources(), data_dir=world.data, notices=notices, asker=asker)
            return first, second

    first, second = asyncio.run(twice())
    assert [s.name for s in first] == [s.name for s in second] == ["theirs"]
    assert len(asker.questions) == 1 and asker.questions[0][1] == ["yes", "no"]
    assert heard == []


def test_a_no_on_a_terminal_skips_with_the_notice_and_remembers_nothing(world: _World) -> None:
    _install(world.project_plugins, "theirs")
    notices = Notices()
    heard = _heard(notices)
    sources = asyncio.run(admit(project=world.project, sources=world.sources(), data_dir=world.data, notices=notices, asker=_Asker("no")))
    assert sources == [] and len(heard) == 1
    assert not (world.data / TRUST_FILE).exists()


def test_an_asker_that_cannot_answer_is_a_no(world: _World) -> None:
    _install(world.project_plugins, "theirs")
    state = trust_state(world.project, world.sources(), world.data)
    assert asyncio.run(ask_trust(_Asker(None), state)) is False


def test_the_changed_notice_says_to_trust_them_as_they_are_now(world: _World) -> None:
    directory = _install(world.project_plugins, "theirs")
    remember(world.project, world.sources(), world.data)
    (directory / "main.py").write_text("print('changed')\n")
    state = trust_state(world.project, world.sources(), world.data)
    assert skip_notice(state) == (
        f"project plugins not started (theirs): they are new or changed since you trusted {world.project}; "
        f"run bingo --trust in {world.project} to trust them as they are now"
    )
