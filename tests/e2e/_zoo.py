"""The fault zoo's harness: a sandbox holding wordcount, the scripted model and zoo plugins,
and the four checks every zoo test makes after the fault (issue 5, part 1):

  - the host kept working: wordcount answered in the same run (its result reached the model);
  - the turn ended (every bingo run is bounded by a timeout);
  - exactly the expected notices name the plugin (`plugin_notices`);
  - the session reads back (`bingo -p -c /tools`, sqlite's integrity check, every tool call
    frame has its result frame) and no process is left behind (`leftovers`).

The figures go to the suite's summary (tests/support/summary.py): faults tried and survived,
processes leaked, frames lost.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bingo.kernel.frames import AssistantFrame, ToolResultFrame
from bingo.sandbox.janitor import proc as procfs
from bingo.store import SessionStore
from bingo.wire import ToolUseBlock
from tests.e2e._bingo import BINGO, EXAMPLES, TEST_PLUGINS, Sandbox, no_traceback
from tests.support import summary
from tests.support.ports import listening_port

ZOO = TEST_PLUGINS / "zoo"
PROVIDER = "plugin__scripted-model__scripted"
COUNTED = "notes.txt: 3 words, 1 lines, 6 characters"
"""What wordcount tells the model about the sandbox's notes.txt."""
EVENT_WAIT = 20.0
"""Seconds to wait for a plugin's mark (a loaded CI machine starts Python slowly)."""


def call(call_id: str, name: str, input: dict[str, Any] | None = None) -> dict[str, Any]:
    """A scripted-model reply step: call this tool."""
    return {"tool": {"id": call_id, "name": name, "input": input or {}}}


def count_step(call_id: str = "wc") -> dict[str, Any]:
    """The well-behaved plugin's call, made after the fault in the same turn."""
    return call(call_id, "plugin__wordcount__count", {"path": "notes.txt"})


def zoo(tmp_path: Path, *names: str, steps: list[dict[str, Any]] | None = None, **settings: Any) -> Sandbox:
    """A sandbox with wordcount, the scripted model and the zoo plugins `names`. The model
    makes each of `steps` (one per response), then wordcount's call, then says "done."."""
    box = Sandbox(tmp_path)
    box.install(EXAMPLES / "wordcount")
    box.install(TEST_PLUGINS / "scripted-model")
    for name in names:
        box.install(ZOO / name)
    (box.project / "notes.txt").write_text("a b c\n", encoding="utf-8")
    replies = [[step] for step in steps or []] + [[count_step()], [{"text": "done."}]]
    plugins = settings.pop("plugins", {})
    permissions = settings.pop("permissions", {"allow": ["plugin__*"]})
    box.settings(
        {
            "provider": PROVIDER,
            "permissions": permissions,
            "plugins": {"scripted-model": {"replies": replies}, **plugins},
            **settings,
        }
    )
    return box


def plugin_notices(stderr: str, name: str) -> list[str]:
    """The notice lines naming plugin `name` (said under its name, or the registry's
    `plugin <name>`)."""
    return [line for line in stderr.splitlines() if line.startswith((f"{name}: ", f"plugin {name}: "))]


def data_dir(box: Sandbox, name: str) -> Path:
    return box.bingo_home / "data" / "plugins" / name


def marks(box: Sandbox, name: str) -> list[str]:
    path = data_dir(box, name) / "marks.txt"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def wait_for_mark(box: Sandbox, name: str, mark: str, proc: subprocess.Popen[str]) -> None:
    """Wait until the zoo plugin `name` has written `mark` (polling a file: the plugin is
    another process, with no event to wait on)."""
    until = time.monotonic() + EVENT_WAIT
    while mark not in marks(box, name):
        assert proc.poll() is None, f"bingo ended before {name} marked {mark!r}"
        assert time.monotonic() < until, f"{name} never marked {mark!r}"
        time.sleep(0.02)


def model_requests(box: Sandbox) -> list[dict[str, Any]]:
    log = data_dir(box, "scripted-model") / "requests.jsonl"
    if not log.exists():
        return []
    messages = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]
    return [m["params"] for m in messages if m.get("method") == "provider/stream"]


def tool_results(box: Sandbox) -> dict[str, str]:
    """The text of every tool result the model was last sent, by tool use id."""
    requests = model_requests(box)
    if not requests:
        return {}
    found: dict[str, str] = {}
    for message in requests[-1]["request"]["messages"]:
        for block in message["content"]:
            if block.get("type") == "toolResult":
                found[block["toolUseId"]] = "".join(p.get("text", "") for p in block["parts"])
    return found


def leftovers(box: Sandbox, timeout: float = 5.0) -> list[int]:
    """Processes still alive `timeout` seconds on: every pid a zoo plugin recorded, and any
    process whose command line names the sandbox (a plugin, a janitor, a forked child).
    Zombies count as gone: PID 1 here may reap late."""
    marker = str(box.root)
    recorded: set[int] = set()
    kept = [*(box.bingo_home / "data" / "plugins").glob("*/pids.txt")]
    if box.env.get("ZOO_RECORD"):
        kept += Path(box.env["ZOO_RECORD"]).glob("*-pids.txt")  # what a removed dataDir held
    for path in kept:
        recorded.update(int(line) for line in path.read_text().split())
    until = time.monotonic() + timeout
    while True:
        named = set(procfs.find(lambda argv: marker in "\0".join(argv)))
        alive = sorted(pid for pid in recorded | named if pid != os.getpid() and procfs.alive(pid))
        if not alive or time.monotonic() >= until:
            return alive
        time.sleep(0.05)


def lost_frames(box: Sandbox) -> int:
    """Tool uses in the latest session with no result frame (0 when every call was closed)."""
    with SessionStore(box.bingo_home / "data" / "sessions.db") as store:
        latest = store.latest(str(box.project))
        if latest is None:
            return 0
        frames = store.frames(latest)
    uses = {
        b.id for f in frames if isinstance(f, AssistantFrame) for b in f.message.content if isinstance(b, ToolUseBlock)
    }
    results = {f.call_id for f in frames if isinstance(f, ToolResultFrame)}
    return len(uses - results)


def reads_back(box: Sandbox) -> None:
    """The session is intact: sqlite says so, `--continue` loads it, no frame is missing."""
    db = box.bingo_home / "data" / "sessions.db"
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    again = box.run("-p", "-c", "/tools")
    assert again.returncode == 0, again.stderr
    assert no_traceback(again)
    lost = lost_frames(box)
    summary.add("zoo", "frames lost", lost)
    assert lost == 0


@contextmanager
def fault(name: str) -> Iterator[None]:
    """Count a fault as tried, and as survived when the block's checks all pass."""
    summary.add("zoo", "faults tried")
    yield
    summary.add("zoo", "faults survived")


def no_leftovers(box: Sandbox) -> None:
    left = leftovers(box)
    summary.add("zoo", "processes leaked", len(left))
    for pid in left:  # leave the machine clean even when the test fails
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    assert left == []


def run_measured(box: Sandbox, *args: str, timeout: float = 60) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run bingo, watching its peak resident memory (VmHWM, in KiB) from outside."""
    proc = box.popen(*args)
    peak = 0

    def watch() -> None:
        nonlocal peak
        status = Path(f"/proc/{proc.pid}/status")
        while proc.poll() is None:
            try:
                for line in status.read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]))
            except OSError:
                return
            time.sleep(0.02)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    watcher.join(5)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), peak


_REAPER = """import os, sys
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as file:
    file.write("%d %d" % (os.waitstatus_to_exitcode(status), usage.ru_maxrss))
"""
"""A small interpreter that starts bingo and reaps it with os.wait4. bingo is not started from
the test process itself: a child the kernel clones from it (fork, vfork, posix_spawn) counts
the test process's own resident set in its ru_maxrss until it execs (Linux keeps the larger),
and pytest holds more than bingo does."""


def run_peak(
    box: Sandbox, *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run bingo to its end; what it printed and its peak resident memory in MiB, as the
    kernel accounts it when the process is reaped (`os.wait4`'s `ru_maxrss`, in KiB: bingo
    and the children it reaped). A run past `timeout` is killed and fails the test."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryDirectory() as scratch:
        verdict = Path(scratch) / "reaped"
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _REAPER, str(verdict), BINGO, *args],
            cwd=box.project,
            env={**box.env, **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        timer = threading.Timer(timeout, os.killpg, (proc.pid, signal.SIGKILL))
        timer.start()
        try:
            proc.wait()
        finally:
            killed = not timer.is_alive()
            timer.cancel()
        out.seek(0)
        err.seek(0)
        said = err.read().decode("utf-8", "replace")
        assert not killed, f"bingo did not end within {timeout} s: {said[-2000:]}"
        code, peak = (int(word) for word in verdict.read_text().split())
        result = subprocess.CompletedProcess([BINGO, *args], code, out.read().decode("utf-8", "replace"), said)
    return result, peak / 1024


HOSTILE = ZOO / "_hostile.py"
"""The zoo's hostile MCP servers and model services (its docstring lists them)."""


def hostile_records(path: Path) -> list[dict[str, Any]]:
    """What a hostile peer recorded of what happened to it, in order."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@contextmanager
def hostile_http(behaviour: str, record: Path) -> Iterator[str]:
    """Run the zoo's hostile HTTP peer `behaviour` on a port of its own (it binds port 0) until
    the block ends; its base URL (`http://127.0.0.1:PORT`)."""
    server = subprocess.Popen(
        [sys.executable, str(HOSTILE), behaviour, str(record), "--http", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        port = listening_port(server, timeout=EVENT_WAIT)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.kill()
        server.wait(10)


def zoo_turn(box: Sandbox, name: str) -> tuple[list[str], dict[str, str]]:
    """One `-p` turn of a `zoo` sandbox that must end well whatever the plugin `name` did:
    the notices said under its name and the tool results the model got (wordcount's among
    them), with the session read back whole and no process left behind."""
    result = box.run("-p", "go")
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith("\ndone.\n")
    assert no_traceback(result)
    results = tool_results(box)
    assert results["wc"] == COUNTED
    reads_back(box)
    no_leftovers(box)
    return plugin_notices(result.stderr, name), results
