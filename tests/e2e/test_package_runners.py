"""MCP servers started through a package runner (`npx`, `uvx`) on a cold cache, through the
real binary with the sandbox on, as a person's first run has them (issue 25 item 4,
ADR-0036): the first start installs the package, which takes longer than
`deadlines.initialize` allows, so a package runner's first start waits
`deadlines.packageInstall` instead, and whatever stops it never leaves the package manager's
cache broken.

These download from the registries (npm and PyPI), as CI on a fresh machine does: two small
packages, `@modelcontextprotocol/server-memory` and `mcp-server-time`, each into a cache of
the test's own. The evidence is the server's: the entity it wrote and read back, the time it
converted, and a second run on the same cache that works."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from bingo.sandbox.janitor import proc as procfs
from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._scripted import model_requests, notices, result_text, text, tool, tool_results, use_scripted_model
from tests.support.summary import record

RUN_TIMEOUT = 240
"""Seconds one run may take: a cold install over a slow CI network included."""

SLOW_MACHINE = 1
"""`deadlines.initialize` in these tests: well under what any cold install takes, so it stands
in for the reporter's machine, where npx's install outlasted the 10 s default."""

NPX = shutil.which("npx") or "npx"
UVX = str(Path(sys.executable).parent / "uvx")
"""uv comes with the `test` extra (pyproject.toml), beside the venv's python."""


def _project(box: Sandbox, servers: dict[str, object]) -> None:
    (box.project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    trusted = box.run("--trust")
    assert trusted.returncode == 0, trusted.stderr


def _one_call(box: Sandbox, name: str, tool_input: Mapping[str, object]) -> tuple[str, str, float]:
    """Run bingo once with the scripted model calling `name`: the tool's result as the
    model got it, bingo's stderr, and the run's seconds (reported, never asserted)."""
    requests = box.bingo_home / "data" / "plugins" / "scripted-model" / "requests.jsonl"
    requests.unlink(missing_ok=True)
    server = name.split("__")[1]
    use_scripted_model(
        box,
        [[tool("c1", name, dict(tool_input))], [text("done")]],
        permissions={"allow": [f"plugin__{server}__*"]},
        deadlines={"initialize": SLOW_MACHINE},
    )
    began = time.monotonic()
    result = box.run("-p", "go", timeout=RUN_TIMEOUT)
    took = time.monotonic() - began
    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    [answer] = tool_results(model_requests(box)[1])
    assert answer.get("isError") is not True, result_text(answer) + result.stderr
    return result_text(answer), result.stderr, took


def test_an_npx_server_on_a_cold_cache_works_on_first_use_and_npms_cache_stays_whole(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    cache = tmp_path / "npm-cache"
    cache.mkdir()
    box.env["npm_config_cache"] = str(cache)
    # In the server's dataDir, which the sandbox lets it write (the project's files are pinned by trust).
    memory = box.bingo_home / "data" / "plugins" / "memory" / "memory.jsonl"
    _project(
        box,
        {
            "memory": {
                "command": NPX,
                "args": ["-y", "@modelcontextprotocol/server-memory"],
                "env": {"MEMORY_FILE_PATH": str(memory)},
            }
        },
    )
    ada = {"entities": [{"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}]}
    created, stderr, cold = _one_call(box, "plugin__memory__create_entities", ada)
    assert "Ada" in created, stderr
    assert not notices(stderr, "memory") or all("stopped" not in line for line in notices(stderr, "memory")), stderr
    # The server wrote it (the attacked side's own file), through npx installed on this run.
    assert "wrote the first program" in memory.read_text(encoding="utf-8")
    assert any((cache / "_npx").iterdir())
    # The same cache again: warm, and whole (a broken one fails with `Cannot find package`).
    graph, stderr, warm = _one_call(box, "plugin__memory__read_graph", {})
    assert "Ada" in graph and "wrote the first program" in graph, stderr
    assert "Cannot find" not in (box.logs / "plugin-memory.log").read_text(encoding="utf-8")
    record("package runners (s)", "npx memory cold", cold)
    record("package runners (s)", "npx memory warm", warm)


def test_a_uvx_server_on_a_cold_cache_works_on_first_use(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    cache = tmp_path / "uv-cache"
    cache.mkdir()
    box.env["UV_CACHE_DIR"] = str(cache)
    _project(box, {"time": {"command": UVX, "args": ["mcp-server-time", "--local-timezone", "UTC"]}})
    noon = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
    converted, stderr, cold = _one_call(box, "plugin__time__convert_time", noon)
    # Tokyo is UTC+9 all year: the server's answer, not bingo's words.
    assert "T21:00:00+09:00" in converted, stderr
    assert any(cache.iterdir())
    again, stderr, warm = _one_call(box, "plugin__time__convert_time", {**noon, "target_timezone": "Asia/Kolkata"})
    assert "T17:30:00+05:30" in again, stderr
    record("package runners (s)", "uvx time cold", cold)
    record("package runners (s)", "uvx time warm", warm)


_INSTALLING_NPX = '''#!/usr/bin/env python3
"""A stand-in for npx in the middle of an install, as npm's installer behaves: the first
SIGTERM makes it finish its step and roll back (which takes a while), a second one kills it
mid-way, which is what leaves npm's cache broken. It records what it got in its cache."""
import os, signal, sys, time
record = os.path.join(os.environ["npm_config_cache"], "record")
def say(line):
    with open(record, "a") as f:
        f.write(line + "\\n")
terms = []
def term(signum, frame):
    terms.append(signum)
    say("term")
    if len(terms) > 1:
        say("killed mid-install")
        os._exit(143)
signal.signal(signal.SIGTERM, term)
say("installing")
while not terms:
    time.sleep(0.05)
time.sleep(3)  # the step under way, then the rollback: longer than a warden's old 1 s grace
say("rolled back")
sys.exit(1)
'''


def test_a_package_runner_stopped_while_installing_gets_one_sigterm_and_time_to_roll_back(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npx = bin_dir / "npx"
    npx.write_text(_INSTALLING_NPX, encoding="utf-8")
    npx.chmod(0o755)
    cache = tmp_path / "npm-cache"
    cache.mkdir()
    box.env["npm_config_cache"] = str(cache)
    box.env["PATH"] = f"{bin_dir}:{box.env['PATH']}"
    _project(box, {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}})
    # Its install outlasts its first start's deadline (1 s here): bingo stops it mid-install.
    use_scripted_model(box, [[text("done")]], deadlines={"initialize": 1, "packageInstall": 1})
    result = box.run("-p", "go", timeout=RUN_TIMEOUT)
    assert result.returncode == 0, result.stderr
    # The attacked side: one SIGTERM, and time to put its cache back before anything else.
    assert (cache / "record").read_text(encoding="utf-8").splitlines() == ["installing", "term", "rolled back"]
    log = box.logs / "plugin-memory.log"
    assert notices(result.stderr, "memory") == [
        "memory: stopped: did not complete its handshake within 1 s of its first start through npx, installing included "
        "(it was asked to stop, and given time to put its cache back): deadlines.packageInstall in settings sets how "
        f"long to wait: log: {log}"
    ]


def _running_with(variable: str) -> list[int]:
    """The live processes whose environment holds `variable` (NAME=value): this test's own."""
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path("/proc", entry, "environ").read_bytes()
        except OSError:
            continue
        if variable.encode() in environ.split(b"\0") and procfs.alive(int(entry)):
            found.append(int(entry))
    return found


def test_bingo_interrupted_while_npx_installs_leaves_npms_cache_whole(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    cache = tmp_path / "npm-cache"
    cache.mkdir()
    box.env["npm_config_cache"] = str(cache)
    _project(box, {"memory": {"command": NPX, "args": ["-y", "@modelcontextprotocol/server-memory"]}})
    use_scripted_model(
        box,
        [[tool("c1", "plugin__memory__read_graph", {})], [text("done")]],
        permissions={"allow": ["plugin__memory__*"]},
    )
    bingo = box.popen("-p", "go")
    try:
        # npm's installer is under way once the packages land in npx's node_modules: the
        # moment a kill would leave half of them (polled: npm is another process).
        until = time.monotonic() + RUN_TIMEOUT
        while len(list(cache.glob("_npx/*/node_modules/*"))) < 10:
            assert bingo.poll() is None, bingo.communicate()[1]
            assert time.monotonic() < until, "npx never began installing"
            time.sleep(0.02)
        bingo.send_signal(signal.SIGINT)
        _out, err = bingo.communicate(timeout=RUN_TIMEOUT)
    finally:
        bingo.kill()
    assert "Traceback" not in err
    # npx, what it started, and the janitor that ended them are gone (the janitor ends its
    # own work a moment after bingo: polled, bounded).
    until = time.monotonic() + 10
    while _running_with(f"npm_config_cache={cache}") and time.monotonic() < until:
        time.sleep(0.02)
    assert _running_with(f"npm_config_cache={cache}") == []
    # The same cache again: npx installs or finds its package whole, and the server answers.
    graph, stderr, _took = _one_call(box, "plugin__memory__read_graph", {})
    assert '"entities"' in graph, stderr
    assert "Cannot find" not in (box.logs / "plugin-memory.log").read_text(encoding="utf-8")


def test_a_slow_first_start_says_once_that_it_may_be_installing(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    cache = tmp_path / "npm-cache"
    cache.mkdir()
    release = cache / "release"
    server = Path(__file__).parents[1] / "plugins" / "mcp-raw" / "server.py"
    # A stand-in for npx whose install lasts until the test has seen the notice.
    (bin_dir / "npx").write_text(
        f"#!{sys.executable}\n"
        "import os, sys, time\n"
        f"while not os.path.exists({str(release)!r}):\n"
        "    time.sleep(0.05)\n"
        f"os.execv(sys.executable, [sys.executable, {str(server)!r}])\n",
        encoding="utf-8",
    )
    (bin_dir / "npx").chmod(0o755)
    box.env["npm_config_cache"] = str(cache)
    box.env["PATH"] = f"{bin_dir}:{box.env['PATH']}"
    _project(box, {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}})
    # Bounded: were the notice never said, the start's deadline would end the run.
    use_scripted_model(
        box,
        [[tool("c1", "plugin__memory__grow", {})], [text("done")]],
        permissions={"allow": ["plugin__memory__*"]},
        deadlines={"packageInstall": 60},
    )
    bingo = box.popen("-p", "go")
    try:
        assert bingo.stderr is not None
        first = bingo.stderr.readline()
        release.write_text("", encoding="utf-8")
        _out, rest = bingo.communicate(timeout=RUN_TIMEOUT)
    finally:
        bingo.kill()
    assert (
        first
        == "memory: starting through npx, which may be installing it first (bingo waits up to 60 s: deadlines.packageInstall in settings)\n"
    )
    assert bingo.returncode == 0, rest
    assert "starting through" not in rest  # once
    [grew] = tool_results(model_requests(box)[1])
    assert result_text(grew) == "grew"
