"""The trust fingerprint has no holes, through the real binary: after `bingo --trust`, no edit
of anything a project plugin runs gets it started without a new question. Each case is a
project plugin whose very first line appends its version to a marker file, so the marker
says exactly which code ran. The person trusts v1; the repository then changes something to
v2; the next run must leave the plugin out (marker still `v1`) and say it changed.

Cases: a `.pyc` entry replaced; an entry reached through `${PLUGIN_ROOT}/..` edited; an entry
inside a directory other tools skip (`.git/`, `.mypy_cache/`, `__pycache__/`); a compiled
cache added beside a trusted module (Python loads it without checking the source); a
directory link whose target is edited; an edit that keeps size and modification time behind
a large file; and a plugin too large to pin, which is never trusted at all.
"""

from __future__ import annotations

import importlib.util
import json
import os
import py_compile
import sys
from pathlib import Path

import pytest

from tests.e2e._bingo import Sandbox, no_traceback

NAME = "probe"


def _body(marker: Path, version: str, before: str = "") -> str:
    """A minimal plugin (command /probe) whose first statement records `version`."""
    return (
        f"open({str(marker)!r}, 'a').write({version!r} + '\\n')\n"
        f"{before}"
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m.get('method') == 'initialize':\n"
        f"        r = {{'protocol': 5, 'name': {NAME!r}, 'version': '1', 'commands': [{{'name': 'probe', 'hint': '', 'args': {{'kind': 'none'}}, 'instant': True, 'family': 'plugin'}}]}}\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': r}), flush=True)\n"
        "    elif 'id' in m:\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {'outcome': {'kind': 'text', 'text': 'probed'}}}), flush=True)\n"
    )


class _Probe:
    """A project plugin `probe` whose entry runs `args` with this interpreter."""

    def __init__(self, box: Sandbox, args: list[str], env: dict[str, str] | None = None) -> None:
        self.box = box
        self.root = box.project / ".bingo" / "plugins" / NAME
        self.root.mkdir(parents=True)
        self.marker = box.root / "ran.txt"
        # Its evidence is written outside the project: the person runs it without a sandbox.
        box.settings({"plugins": {NAME: {"sandbox": {"mode": "off"}}}})
        entry = {"command": sys.executable, "args": args, "env": env or {}}
        (self.root / "plugin.json").write_text(
            json.dumps({"name": NAME, "version": "1", "entry": entry}), encoding="utf-8"
        )

    def body(self, version: str, before: str = "") -> str:
        return _body(self.marker, version, before)

    def ran(self) -> list[str]:
        return self.marker.read_text(encoding="utf-8").split() if self.marker.exists() else []

    def trust_then_run(self) -> None:
        trusted = self.box.run("--trust")
        assert trusted.returncode == 0, trusted.stderr
        result = self.box.run("-p", "/probe")
        assert result.stdout == "probed\n", result.stderr
        assert self.ran() == ["v1"]

    def refused_after_change(self, changed: str) -> None:
        """The changed code did not run, and the notice names `changed`, the file that did."""
        result = self.box.run("-p", "/probe")
        assert no_traceback(result)
        assert result.stdout == ""
        assert result.returncode == 2, result.stderr  # there is no /probe while it is left out
        assert self.ran() == ["v1"], "the changed code ran without a new question"
        [line] = [line for line in result.stderr.splitlines() if "left out" in line]
        assert f"changed since you trusted it ({changed})" in line


def test_a_replaced_pyc_entry_is_a_change(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    probe = _Probe(box, ["${PLUGIN_ROOT}/main.pyc"])
    source = tmp_path / "main.py"
    source.write_text(probe.body("v1"), encoding="utf-8")
    py_compile.compile(str(source), cfile=str(probe.root / "main.pyc"), doraise=True)
    probe.trust_then_run()
    source.write_text(probe.body("v2"), encoding="utf-8")
    py_compile.compile(str(source), cfile=str(probe.root / "main.pyc"), doraise=True)
    probe.refused_after_change(".bingo/plugins/probe/main.pyc")


def test_an_entry_reached_through_plugin_root_dot_dot_is_hashed_by_its_real_path(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    probe = _Probe(box, ["${PLUGIN_ROOT}/../../../run.py"])
    run = box.project / "run.py"
    run.write_text(probe.body("v1"), encoding="utf-8")
    probe.trust_then_run()
    run.write_text(probe.body("v2"), encoding="utf-8")
    probe.refused_after_change("run.py")


def test_an_entry_relative_to_the_working_directory_is_hashed(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    probe = _Probe(box, ["tools/run.py"])
    (box.project / "tools").mkdir()
    run = box.project / "tools" / "run.py"
    run.write_text(probe.body("v1"), encoding="utf-8")
    probe.trust_then_run()
    run.write_text(probe.body("v2"), encoding="utf-8")
    probe.refused_after_change("tools/run.py")


@pytest.mark.parametrize("skipped", [".git", ".mypy_cache", "__pycache__"])
def test_an_entry_inside_a_directory_other_tools_skip_is_hashed(tmp_path: Path, skipped: str) -> None:
    box = Sandbox(tmp_path)
    probe = _Probe(box, [f"${{PLUGIN_ROOT}}/{skipped}/run.py"])
    (probe.root / skipped).mkdir()
    run = probe.root / skipped / "run.py"
    run.write_text(probe.body("v1"), encoding="utf-8")
    probe.trust_then_run()
    run.write_text(probe.body("v2"), encoding="utf-8")
    probe.refused_after_change(f".bingo/plugins/probe/{skipped}/run.py")


def test_a_compiled_cache_added_beside_a_trusted_module_is_a_change(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    probe = _Probe(box, ["${PLUGIN_ROOT}/main.py"])
    helper = probe.root / "helper.py"
    helper.write_text("VERSION = 'v1'\n", encoding="utf-8")
    main = "import os, sys\nsys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))\nimport helper\n"
    (probe.root / "main.py").write_text(main + probe.body("v1").replace("'v1'", "helper.VERSION", 1), encoding="utf-8")
    probe.trust_then_run()
    # The attack: a .pyc of other code that claims helper.py's size and mtime, which is all
    # Python checks before loading it instead of the source.
    evil = tmp_path / "helper.py"
    evil.write_text("VERSION = 'v2'\n", encoding="utf-8")
    stat = helper.stat()
    os.utime(evil, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    cached = importlib.util.cache_from_source(str(helper))
    py_compile.compile(str(evil), cfile=cached, doraise=True)
    probe.refused_after_change(os.path.relpath(cached, box.project))


def test_a_directory_link_is_followed_and_its_target_hashed(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    probe = _Probe(box, ["${PLUGIN_ROOT}/main.py"])
    lib = box.project / "lib"
    lib.mkdir()
    (lib / "helper.py").write_text("VERSION = 'v1'\n", encoding="utf-8")
    (probe.root / "lib").symlink_to("../../../lib", target_is_directory=True)
    main = (
        "import os, sys\n"
        "sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'lib'))\n"
        "import helper\n"
    )
    (probe.root / "main.py").write_text(main + probe.body("v1").replace("'v1'", "helper.VERSION", 1), encoding="utf-8")
    probe.trust_then_run()
    (lib / "helper.py").write_text("VERSION = 'v2'\n", encoding="utf-8")
    probe.refused_after_change(".bingo/plugins/probe/lib/helper.py")


def test_a_link_out_of_the_project_is_named_when_trusting(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    probe = _Probe(box, ["${PLUGIN_ROOT}/main.py"])
    (probe.root / "main.py").write_text(probe.body("v1"), encoding="utf-8")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (probe.root / "shared").symlink_to(outside, target_is_directory=True)
    result = box.run("--trust")
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith(
        f"; what leads out of the project is trusted too: plugin {NAME}: ./shared -> {outside.resolve()}\n"
    )


def test_an_edit_that_keeps_size_and_time_behind_a_large_file_is_a_change(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    probe = _Probe(box, ["${PLUGIN_ROOT}/main.py"])
    with (probe.root / "aaa-data.bin").open("wb") as blob:  # sorted first: hashed before main.py
        blob.truncate(70 * 1024 * 1024)
    main = probe.root / "main.py"
    main.write_text(probe.body("v1"), encoding="utf-8")
    probe.trust_then_run()
    stat = main.stat()
    main.write_text(probe.body("v2"), encoding="utf-8")
    os.utime(main, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert main.stat().st_size == stat.st_size
    probe.refused_after_change(".bingo/plugins/probe/main.py")


def test_a_plugin_too_large_to_pin_is_never_trusted(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    probe = _Probe(box, ["${PLUGIN_ROOT}/main.py"])
    with (probe.root / "huge.bin").open("wb") as blob:
        blob.truncate(600 * 1024 * 1024)
    (probe.root / "main.py").write_text(probe.body("v1"), encoding="utf-8")
    trusted = box.run("--trust")
    assert trusted.returncode == 0, trusted.stderr
    assert trusted.stdout.endswith(f"cannot be trusted: plugin {NAME} (it holds more than 512 MiB to hash)\n")
    result = box.run("-p", "/probe")
    assert result.returncode == 2
    assert probe.ran() == []
    [line] = [line for line in result.stderr.splitlines() if "left out" in line]
    assert f"(never trusted: plugin {NAME}: it holds more than 512 MiB to hash)" in line
