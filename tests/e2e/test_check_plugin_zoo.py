"""The whole fault zoo through `bingo --check-plugin --call` (issue 18, item 2): whatever a
plugin does, the checker ends with a report (exit 0 or 1, never a traceback, nothing left
running), and each zoo member gets the line that names its fault.

Members are checked concurrently (each is its own bingo process, as an author's CI runs it),
under short deadlines, so the whole zoo takes seconds, not minutes.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.e2e._bingo import TEST_PLUGINS, Sandbox, no_traceback
from tests.e2e._zoo import leftovers

ZOO = TEST_PLUGINS / "zoo"
WORKERS = 6
"""Members checked at once: most of a check is waiting on a deadline or a grace period."""

FAULTS: dict[str, list[tuple[str, str, str]]] = {
    # member: [(the check, its status, words of what it found or of its fix)]
    "asks-elsewhere": [
        ("call.snoop.host", "fail", "bingo.host ask was refused: call nobody is not a call you are running")
    ],
    "bad-display": [("call.poke.display", "fail", "its display was dropped, the parts were kept")],
    "bad-ids": [("behaviour.ids", "fail", "answered id 987654")],
    "bad-utf8": [("behaviour.stdout", "fail", "wrote a line to stdout that is not JSON-RPC")],
    "deep-answer": [("call.poke.answer", "fail", "answered tool/call with a result nested too deeply")],
    "deep-handshake": [("start.handshake", "fail", "answered initialize with a result nested too deeply")],
    "deep-line": [("behaviour.stdout", "fail", "nested too deeply")],
    "escape-crash": [("behaviour.alive", "fail", "exited with code 9")],
    "escapes": [
        ("declarations.text", "fail", "terminal control characters or bidirectional overrides"),
        ("declarations.tool-names", "warn", "which model APIs refuse as it is"),
    ],
    "exit-in-handshake": [("start.handshake", "fail", "exited with code 7")],
    # Its `wait` never answers; the children it leaves behind are the janitor's to end, a
    # promise of the host's (test_zoo_processes.py), not a rule an author can break.
    "forks": [("call.wait.answer", "fail", "did not answer tool/call within 3 s")],
    "hook-allow": [
        ("behaviour.hook.gatekeeper.before", "fail", "answered hook/decide with outcome 'allow', which decides nothing")
    ],
    # A redirect is wire the host reads; that it names another tool is worth a warning.
    "hook-redirect": [("behaviour.hook.gatekeeper.before", "warn", "redirected a call of bingo-check to 'bash'")],
    # Its 20 MiB answer fails the call at once (issue 23 item 9), never a wait for the deadline.
    "huge-answer": [("call.poke.answer", "fail", "past the 16 MiB bingo keeps of one message")],
    "huge-line": [("behaviour.stdout", "fail", "line longer than the limit")],
    # A flood: its answer to an 8 MiB id comes after 180 MiB of methods, past the call's
    # deadline on a loaded machine, so only the methods are sure to be read before it stops.
    "huge-method": [("behaviour.stdout", "fail", "which is no message a plugin sends")],
    # Ignoring tool/cancel makes a plugin slow, never broken (the seed): a warning. It
    # answers its `delay` (2 s) after the call; the figure said is the machine's (2.1 s on a
    # loaded one), so the words asserted stop before it: it answered, late, not "did not".
    "ignores-cancel": [("call.wait.cancel", "warn", "tool wait answered ")],
    "ignores-eof": [("behaviour.eof", "fail", "did not exit within 2 s of its stdin closing")],
    "late-answer": [("call.poke.answer", "fail", "did not answer tool/call within 3 s")],
    "never-reads": [("call.poke.answer", "fail", "does not read its stdin")],
    "node-crash": [("behaviour.alive", "fail", "Error: Cannot find module 'left-pad'")],
    "not-json": [("behaviour.stdout", "fail", "plain text on stdout, where only messages belong")],
    "notice-flood": [("call.poke.host", "fail", "bingo.host notices during one call")],
    "pretty-json": [("behaviour.lines", "fail", "pretty-printed")],
    "progress-flood": [("call.poke.progress", "fail", "tool/progress lines a second")],
    "reserved-service": [
        (
            "declarations.names",
            "fail",
            "service 'bingo.files' refused: keys starting 'bingo.' are reserved for the host",
        )
    ],
    "shadow": [("declarations.names", "fail", "tool 'read' refused: read is bingo's own tool; rename it")],
    "silent-handshake": [
        ("start.handshake", "fail", "did not complete its handshake within 5 s: deadlines.initialize in settings")
    ],
    "stderr-flood": [("behaviour.stderr", "fail", "wrote more than 1 MiB to stderr")],
    "string-id": [("behaviour.ids", "fail", "bingo's request ids are integers")],
    "wrong-name": [("start.name", "fail", "its handshake says it is 'someone-else'")],
    "wrong-protocol": [("start.protocol", "fail", "it speaks protocol 4, but this host speaks only protocol 5")],
    "wrong-shape": [("call.poke.answer", "fail", "answered tool/call in the wrong shape")],
}
"""Each member's fault, as the checker names it."""

PASSING: dict[str, str] = {
    "partial-lines": "a message written in pieces is one line all the same: bingo reads to the newline",
    "dies-streaming": "its fault is in provider/stream, which the checker never calls (a model call may cost money)",
    "mcp-huge-result": "an MCP server whose fault is in `poke`, which --call does not call: it does not say it only reads (tests/e2e/test_hostile_peers.py calls it)",
    "mcp-list-flood": "an MCP server whose fault is in `poke`, which --call does not call: it does not say it only reads (tests/e2e/test_hostile_peers.py calls it)",
    "breaks-out": "its fault is what it reaches for when it starts, which the sandbox refuses (test_sandbox_plugins.py); on the wire it behaves",
    "breaks-out-mcp": "the same, as an MCP server (test_sandbox_plugins.py)",
}
"""Members whose fault is no rule of the wire the checker can see, and why."""
WRITES_ITS_ROOT = frozenset({"mcp-huge-result", "mcp-list-flood"})
"""Members that keep their record in their own directory: checked from a copy in the project."""


def _check(box: Sandbox, name: str) -> tuple[str, subprocess.CompletedProcess[str]]:
    member = ZOO / name
    if name in WRITES_ITS_ROOT:
        # Where the sandbox lets it keep its record: the project.
        member = box.project / "zoo" / name
        shutil.copytree(ZOO / name, member)
        (member / "record.jsonl").touch()  # its argument names it: a file that is there
    return name, box.run("--check-plugin", str(member), "--call", "--json", timeout=90)


def test_every_zoo_member_is_in_the_table() -> None:
    members = sorted(path.name for path in ZOO.iterdir() if path.is_dir())
    assert sorted([*FAULTS, *PASSING]) == members


def test_the_checker_names_each_zoo_members_fault_and_never_crashes(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    # The check gives each member a dataDir it removes afterwards: the pids are kept here too.
    record = box.project / "zoo-record"
    record.mkdir()
    box.env["ZOO_RECORD"] = str(record)
    box.settings(
        {
            # Short, so that the members that never answer cost seconds; long enough that a
            # loaded machine starts every other one in time.
            "deadlines": {"initialize": 5, "tool/call": 3},
            "plugins": {
                "late-answer": {"delay": 5},
                "ignores-cancel": {"delay": 2},
                "stderr-flood": {"delay": 0.3},
                "never-reads": {"requests": 300000},
            },
        }
    )
    with ThreadPoolExecutor(WORKERS) as pool:
        results = dict(pool.map(lambda name: _check(box, name), sorted([*FAULTS, *PASSING])))
    wrong: list[str] = []
    for name, result in results.items():
        assert no_traceback(result), name
        assert result.returncode in (0, 1), f"{name}: {result.stderr}"
        report: dict[str, Any] = json.loads(result.stdout)
        by_id = {check["id"]: check for check in report["checks"]}
        if name in PASSING:
            if not report["ok"] or result.returncode != 0:
                wrong.append(f"{name}: expected to pass ({PASSING[name]})")
            continue
        for check_id, status, words in FAULTS[name]:
            check = by_id.get(check_id)
            if check is None or check["status"] != status or words not in check["detail"] + check["fix"]:
                wrong.append(f"{name}: expected {check_id} {status} with {words!r}, got {check}")
        expected_code = 1 if any(status == "fail" for _, status, _ in FAULTS[name]) else 0
        if result.returncode != expected_code:
            wrong.append(f"{name}: exit {result.returncode}, expected {expected_code}")
    assert wrong == []
    assert leftovers(box) == []
