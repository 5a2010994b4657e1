"""Launch records and the head start they give (`bridge/_early.py`, ADR-0014): a record
holds only while the environment and every witness are as recorded, is rewritten only when
it changes, and a begun plugin is handed over once, for exactly its command line."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from bingo.bridge import _early
from bingo.bridge._early import LAUNCHES, Recipe

ENV = {"PATH": os.environ.get("PATH", ""), "HOME": "/nowhere"}


def _recipe(*args: str) -> Recipe:
    return Recipe(path=sys.executable, argv=(sys.executable, *args), extra=(("PLUGIN_MODE", "fast"),))


def _held(data: Path, cwd: str, command: str, environ: dict[str, str]) -> list[Recipe]:
    record = _early._records(str(data / LAUNCHES)).get(f"{cwd}\0{command}")  # pyright: ignore[reportPrivateUsage]
    return _early._recipes(record, environ)  # pyright: ignore[reportPrivateUsage]


def test_the_command_of_a_prompt() -> None:
    assert _early.command_of("/wordcount notes.txt") == "wordcount"
    assert _early.command_of("/help") == "help"
    assert _early.command_of("hello there") is None
    assert _early.command_of("/") is None
    assert _early.command_of(None) is None


def test_a_record_holds_while_its_witnesses_and_the_environment_do(tmp_path: Path) -> None:
    settings, absent = tmp_path / "settings.json", tmp_path / "later.json"
    settings.write_text("{}", encoding="utf-8")
    _early.remember(tmp_path, "/p", "wc", [_recipe("a")], [settings, absent], ENV)
    assert _held(tmp_path, "/p", "wc", ENV) == [_recipe("a")]
    assert _held(tmp_path, "/p", "other", ENV) == []
    assert _held(tmp_path, "/elsewhere", "wc", ENV) == []
    assert _held(tmp_path, "/p", "wc", {**ENV, "NEW": "1"}) == []
    time.sleep(0.01)
    settings.write_text("{}", encoding="utf-8")  # the same bytes, written again
    assert _held(tmp_path, "/p", "wc", ENV) == []
    _early.remember(tmp_path, "/p", "wc", [_recipe("a")], [settings, absent], ENV)
    assert _held(tmp_path, "/p", "wc", ENV) == [_recipe("a")]
    absent.write_text("{}", encoding="utf-8")  # a witness that appears
    assert _held(tmp_path, "/p", "wc", ENV) == []


def test_a_record_is_written_only_when_it_changes_and_forgotten_with_no_plugins(tmp_path: Path) -> None:
    _early.remember(tmp_path, "/p", "wc", [_recipe("a")], [], ENV)
    before = (tmp_path / LAUNCHES).stat()
    _early.remember(tmp_path, "/p", "wc", [_recipe("a")], [], ENV)
    after = (tmp_path / LAUNCHES).stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    _early.remember(tmp_path, "/p", "wc", [_recipe("b")], [], ENV)
    assert _held(tmp_path, "/p", "wc", ENV) == [_recipe("b")]
    _early.remember(tmp_path, "/p", "wc", [], [], ENV)
    assert json.loads((tmp_path / LAUNCHES).read_text(encoding="utf-8"))["records"] == {}


def test_only_the_latest_records_are_kept(tmp_path: Path) -> None:
    for n in range(70):
        _early.remember(tmp_path, f"/p{n}", "wc", [_recipe()], [], ENV)
    records = json.loads((tmp_path / LAUNCHES).read_text(encoding="utf-8"))["records"]
    assert len(records) == 64
    assert "/p69\0wc" in records and "/p5\0wc" not in records


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "[]",
        '{"version": 99, "records": {}}',
        '{"version": 1, "records": []}',
        '{"version": 1, "records": {"/p\\u0000wc": {"environ": "x", "witness": [], "spawn": []}}}',
        '{"version": 1, "records": {"/p\\u0000wc": {"environ": 0, "witness": [["/", 1, 2]], "spawn": []}}}',
        '{"version": 1, "records": {"/p\\u0000wc": {"environ": 0, "witness": [], "spawn": [{"path": 3}]}}}',
    ],
)
def test_a_record_that_is_not_one_gives_no_head_start(tmp_path: Path, content: str) -> None:
    data = tmp_path / ".bingo" / "data"
    data.mkdir(parents=True)
    (data / LAUNCHES).write_text(content, encoding="utf-8")
    assert _early.begin({"BINGO_HOME": str(tmp_path / ".bingo")}, "/p", "/wc") == 0
    assert _early.take_janitor() is None


def test_begun_plugins_are_handed_over_once_for_exactly_their_command_line(tmp_path: Path) -> None:
    home = tmp_path / ".bingo"
    environ = {**ENV, "BINGO_HOME": str(home)}
    recipe = _recipe("-c", "import sys; sys.stdin.read()")
    _early.remember(home / "data", str(tmp_path), "wc", [recipe], [], environ)
    assert _early.begin(environ, str(tmp_path), "/wc now") == 1
    janitor = _early.take_janitor()
    assert janitor is not None
    pid, sock, ids = janitor
    try:
        assert ids == [1]
        env = {**environ, "PLUGIN_MODE": "fast"}
        assert _early.take(recipe.path, recipe.argv, {**env, "OTHER": "1"}, str(tmp_path)) is None
        assert _early.take(recipe.path, recipe.argv, env, "/elsewhere") is None
        begun = _early.take(recipe.path, recipe.argv, env, str(tmp_path))
        assert begun is not None and begun.request_id == 1
        assert _early.take(recipe.path, recipe.argv, env, str(tmp_path)) is None
        for fd in begun.fds:
            os.close(fd)
    finally:
        _early.abandon()
        sock.close()  # the janitor reads EOF, ends what it started, and exits
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_head_start_whose_janitor_died_is_started_again(tmp_path: Path) -> None:
    from bingo.bridge import process
    from bingo.bridge.process import PluginLog, PluginProcess

    home = tmp_path / ".bingo"
    environ = {**os.environ, "BINGO_HOME": str(home)}
    recipe = Recipe(path=sys.executable, argv=(sys.executable, "-c", "import sys; print(sys.stdin.readline().upper(), end='')"), extra=())
    _early.remember(home / "data", str(tmp_path), "wc", [recipe], [], environ)
    before = process._current  # pyright: ignore[reportPrivateUsage]
    process._current = None  # pyright: ignore[reportPrivateUsage]  # this run has no janitor yet
    try:
        assert _early.begin(environ, str(tmp_path), "/wc") == 1
        started = _early._janitor  # pyright: ignore[reportPrivateUsage]
        assert started is not None
        os.kill(started[0], signal.SIGKILL)
        os.waitpid(started[0], 0)
        log = PluginLog(tmp_path / "plugin.log")

        async def main() -> bytes:
            proc = await PluginProcess.spawn(list(recipe.argv), env=dict(environ), cwd=tmp_path, log=log)
            async with asyncio.timeout(10), proc:
                proc.stdin.write(b"hello\n")
                return await proc.stdout.read()

        assert asyncio.run(main()) == b"HELLO\n"
        assert "begun before" not in (tmp_path / "plugin.log").read_text(encoding="utf-8")
        assert _early.take_janitor() is None
    finally:
        fresh = process._current  # pyright: ignore[reportPrivateUsage]
        if fresh is not None and fresh is not before:
            fresh.sock.close()  # it reads EOF and exits
            os.waitpid(fresh.pid, 0)
        process._current = before  # pyright: ignore[reportPrivateUsage]
