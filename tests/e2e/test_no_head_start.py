"""No plugin starts before bingo has decided it should, black-box (issue 11, item 6): the
head start of ADR-0014 is gone. A repeated slash command writes no launch record, a launch
record left in the data directory by an older bingo is never executed (nor touched), and a
user plugin starts only in a run that uses it, also once a project plugin of its name appears
(which the head start's witnesses could miss)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path

from bingo.sandbox.janitor import proc as procfs
from tests.e2e._bingo import BINGO, TEST_PLUGINS, TIMEOUT, Sandbox, no_traceback

LAUNCHES = "launches.json"
"""Where the head start kept its records, in the data directory."""

_MARKING = """\
here=$(dirname "$0")
echo $$ >> "$here/processes.txt"
exec python3 "$here/main.py"
"""
"""A start script for the renamable plugin that notes each process first thing, before
bingo has said a word to it: its own handshake log would miss a start nobody talked to, and
a shell is up in a millisecond, well before a run that did not want it ends it."""


def _janitor_of(bingo: int) -> list[int]:
    """The janitor (and its wardens) of the bingo run with pid `bingo`."""
    return procfs.find(lambda argv: any("from janitor import _server;" in word for word in argv) and str(bingo) in argv)


def _gone(find: Callable[[], list[int]]) -> list[int]:
    """What `find` still finds after up to 5 s (processes end on their own time)."""
    deadline = time.monotonic() + 5
    while (found := find()) and time.monotonic() < deadline:
        time.sleep(0.02)
    return found


def _install_marking(box: Sandbox, *, layer: str = "user") -> Path:
    """The renamable plugin, started through `_MARKING`; its directory."""
    root = box.install(TEST_PLUGINS / "renamable", layer=layer)
    (root / "marking.sh").write_text(_MARKING, encoding="utf-8")
    manifest = json.loads((root / "plugin.json").read_text(encoding="utf-8"))
    manifest["entry"] = {"command": "sh", "args": ["${PLUGIN_ROOT}/marking.sh"]}
    (root / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")
    # It marks each start in its own directory, which a confined plugin only reads: the person
    # runs it without a sandbox.
    box.settings({"plugins": {"renamable": {"sandbox": {"mode": "off"}}}})
    return root


def _processes(root: Path) -> list[str]:
    path = root / "processes.txt"
    return path.read_text(encoding="utf-8").split() if path.exists() else []


def _hello(box: Sandbox, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`bingo -p /hello`, to its end, and until nothing of it is left."""
    run = subprocess.Popen(
        [BINGO, "-p", "/hello"],
        cwd=cwd or box.project,
        env=box.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = run.communicate(timeout=TIMEOUT)
    assert _gone(lambda: _janitor_of(run.pid)) == []
    return subprocess.CompletedProcess(run.args, run.returncode, out, err)


def _crc(environ: Mapping[str, str]) -> int:
    """The environment digest a launch record held (ADR-0014's recipe)."""
    text = "\0".join(f"{key}={value}" for key, value in sorted(environ.items()))
    return zlib.crc32(text.encode("utf-8", "surrogateescape"))


def test_a_janitor_is_known_by_its_command_line() -> None:
    # What `_janitor_of` looks for (so that "no janitor is left" cannot pass by looking
    # for the wrong thing): one started the way bingo starts it, gone at EOF.
    from bingo.sandbox.janitor import spawn_janitor

    pid, sock = spawn_janitor()
    try:
        # posix_spawn returns a moment before the new command line can be read: wait for it.
        deadline = time.monotonic() + 5
        while pid not in _janitor_of(os.getpid()) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert pid in _janitor_of(os.getpid())  # (this test process may have its own already)
    finally:
        sock.close()
        os.waitpid(pid, 0)
    assert pid not in _janitor_of(os.getpid())


def test_a_repeated_slash_command_writes_no_launch_record(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    root = _install_marking(box)
    for run in (1, 2, 3):
        result = _hello(box)
        assert result.returncode == 0 and result.stderr == "", result.stderr
        assert result.stdout == "hello from renamable\n"
        assert not (box.bingo_home / "data" / LAUNCHES).exists()
        assert len(_processes(root)) == run  # one start per run, at its use
    assert (box.bingo_home / "data").is_dir()  # the runs did write there: logs, the cache
    starts = [
        line
        for line in (box.logs / "plugin-renamable.log").read_text(encoding="utf-8").splitlines()
        if "] starting " in line
    ]
    assert len(starts) == 3 and not any("begun" in line for line in starts)


def test_a_launch_record_left_by_an_older_bingo_is_never_executed(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "renamable")
    marker = tmp_path / "executed"
    script = tmp_path / "record.sh"
    script.write_text(f"echo the launch record ran > '{marker}'\n", encoding="utf-8")
    # A record exactly as the head start would have taken it: this directory and command,
    # this environment, no witness to disagree.
    record = {
        "environ": _crc(box.env),
        "witness": [],
        "spawn": [{"path": "/bin/sh", "argv": ["/bin/sh", str(script)], "extra": {}}],
    }
    launches = box.bingo_home / "data" / LAUNCHES
    launches.parent.mkdir(parents=True)
    seeded = json.dumps({"version": 1, "records": {f"{box.project.resolve()}\0hello": record}})
    launches.write_text(seeded, encoding="utf-8")
    for _ in range(2):
        result = _hello(box)
        assert result.returncode == 0 and result.stderr == "", result.stderr
        assert result.stdout == "hello from renamable\n"
        assert no_traceback(result)
    assert not marker.exists()
    assert procfs.find(lambda argv: str(script) in argv) == []
    assert launches.read_text(encoding="utf-8") == seeded  # a user's file: ignored, not removed


def test_a_user_plugin_starts_only_in_a_run_that_uses_it(tmp_path: Path) -> None:
    # In a subdirectory of a repository, the project is the repository until the
    # subdirectory gets a `.bingo/` of its own. The head start's witnesses were the
    # repository's `.bingo/`, so once the subdirectory's plugin of the same name hid the
    # user's, the head start still began the user's: a run that did not use it started it.
    box = Sandbox(tmp_path)
    root = _install_marking(box)
    sub = box.project / "sub"
    sub.mkdir()
    first = _hello(box, cwd=sub)
    assert first.returncode == 0 and first.stdout == "hello from renamable\n", first.stderr
    assert len(_processes(root)) == 1
    shutil.copytree(TEST_PLUGINS / "renamable", sub / ".bingo" / "plugins" / "renamable")  # not trusted
    result = _hello(box, cwd=sub)
    assert no_traceback(result)
    # Whether an untrusted project plugin hides the user's is trust's rule, not this test's:
    # the user's plugin answers exactly when it was started.
    used = result.stdout == "hello from renamable\n"
    assert len(_processes(root)) == 1 + used
