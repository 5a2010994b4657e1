"""One plugin process: its log, how it ended, and a shutdown that leaves nothing behind. The
tests of what every plugin process does run through both spawn paths (`PATHS`): the run's
janitor (Linux) and the direct one (elsewhere); the rest are the janitor's alone."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Awaitable
from pathlib import Path

import pytest

from bingo.bridge import process
from bingo.bridge.process import PluginLog, PluginProcess, describe_exit, useful_stderr_line
from bingo.sandbox.janitor import proc as procfs

PATHS = [pytest.param(True, id="janitor"), pytest.param(False, id="direct")]
"""Both ways a plugin is started, for `janitor`: the janitor is Linux's; the direct path,
everywhere else's, runs here too."""


def _parent(pid: int) -> int:
    found = procfs.parent(pid)
    assert found is not None, f"no process {pid}"
    return found


async def _gone(*pids: int) -> None:
    """Wait until none of `pids` is alive (they are not our children: no event to wait on)."""
    async with asyncio.timeout(5):
        while any(procfs.alive(pid) for pid in pids):
            await asyncio.sleep(0.01)


def _spawn(script: str, tmp_path: Path, *, janitor: bool = True) -> Awaitable[PluginProcess]:
    return PluginProcess.spawn(
        [sys.executable, "-c", script],
        env=dict(os.environ),
        cwd=tmp_path,
        log=PluginLog(tmp_path / "p.log"),
        janitor=janitor,
    )


def test_how_a_process_ended_is_said_in_words() -> None:
    assert describe_exit(0) == "exited with code 0"
    assert describe_exit(3) == "exited with code 3"
    assert describe_exit(-signal.SIGKILL) == "was killed by SIGKILL"
    assert describe_exit(None) == "closed its stdout"


def test_the_log_rotates_at_its_bound_and_keeps_two_files(tmp_path: Path) -> None:
    log = PluginLog(tmp_path / "logs" / "plugin-x.log", max_bytes=100)
    for n in range(30):
        log.write(f"line {n:02d}\n".encode())
    current = (tmp_path / "logs" / "plugin-x.log").read_text()
    previous = (tmp_path / "logs" / "plugin-x.log.1").read_text()
    assert current.endswith("line 29\n") and len(current) <= 100
    assert previous.endswith("\n") and len(previous) <= 100
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == ["plugin-x.log", "plugin-x.log.1"]


@pytest.mark.parametrize("janitor", PATHS)
def test_stderr_goes_to_the_log_and_its_last_line_is_kept(tmp_path: Path, janitor: bool) -> None:
    script = "import sys; sys.stderr.write('first\\nlast words\\n'); sys.stdout.write('out\\n')"

    async def main() -> tuple[str, str, bytes]:
        proc = await _spawn(script, tmp_path, janitor=janitor)
        async with asyncio.timeout(5), proc:
            out = await proc.stdout.readline()
            how = await proc.ended()
        return how, proc.last_stderr, out

    how, last, out = asyncio.run(main())
    assert (how, last, out) == ("exited with code 0", "last words", b"out\n")
    text = (tmp_path / "p.log").read_text()
    assert "first\nlast words\n" in text and "[bingo " in text


@pytest.mark.parametrize("janitor", PATHS)
def test_a_process_that_exits_when_its_stdin_closes_ends_as_it_chose_with_no_fault(
    tmp_path: Path, janitor: bool
) -> None:
    faults: list[str] = []

    async def main() -> int | None:
        proc = await _spawn(
            "import sys; print('up', flush=True); sys.stdin.read(); raise SystemExit(4)", tmp_path, janitor=janitor
        )
        proc.on_fault = lambda key, what: faults.append(key)
        async with asyncio.timeout(5), proc:
            assert await proc.stdout.readline() == b"up\n"
        return proc.returncode

    assert asyncio.run(main()) == 4
    assert faults == []


@pytest.mark.parametrize("janitor", PATHS)
def test_a_process_that_ignores_its_stdin_closing_is_stopped_with_sigterm_and_it_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, janitor: bool
) -> None:
    monkeypatch.setattr(process, "EXIT_GRACE", 0.05)
    faults: list[str] = []

    async def main() -> int | None:
        proc = await _spawn("import time; print('up', flush=True); time.sleep(60)", tmp_path, janitor=janitor)
        proc.on_fault = lambda key, what: faults.append(key)
        async with asyncio.timeout(5), proc:
            assert await proc.stdout.readline() == b"up\n"
        return proc.returncode

    assert asyncio.run(main()) == -signal.SIGTERM
    assert faults == ["ignores-stop"]


@pytest.mark.parametrize("janitor", PATHS)
def test_a_process_that_ignores_stdin_and_sigterm_is_killed_with_its_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, janitor: bool
) -> None:
    # Through the janitor, its warden (given half of TERM_GRACE) kills it and sweeps before
    # bingo's SIGKILL would; directly, bingo's SIGKILL of the group does.
    monkeypatch.setattr(process, "EXIT_GRACE", 0.05)
    monkeypatch.setattr(process, "TERM_GRACE", 0.1)
    script = textwrap.dedent(
        """
        import os, signal, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            time.sleep(60)
        else:
            print(os.getpid(), flush=True)
            time.sleep(60)
        """
    )
    pids: list[int] = []

    async def main() -> int | None:
        proc = await _spawn(script, tmp_path, janitor=janitor)
        async with asyncio.timeout(5), proc:
            pids.append(int(await proc.stdout.readline()))
            pids.extend(procfs.children(pids[0]))
        return proc.returncode

    assert asyncio.run(main()) == -signal.SIGKILL
    assert len(pids) == 2 and not any(procfs.alive(pid) for pid in pids)


@pytest.mark.parametrize("janitor", PATHS)
def test_a_process_known_not_to_read_its_stdin_is_sent_sigterm_at_once_and_no_fault_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, janitor: bool
) -> None:
    # Closing its stdin would tell it nothing: the grace for that is skipped (made longer
    # than the test's timeout here), and its stop was said already by whoever found it deaf.
    monkeypatch.setattr(process, "EXIT_GRACE", 60.0)
    faults: list[str] = []

    async def main() -> int | None:
        proc = await _spawn("import time; print('up', flush=True); time.sleep(60)", tmp_path, janitor=janitor)
        proc.on_fault = lambda key, what: faults.append(key)
        proc.deaf = True
        async with asyncio.timeout(5), proc:
            assert await proc.stdout.readline() == b"up\n"
        return proc.returncode

    assert asyncio.run(main()) == -signal.SIGTERM
    assert faults == []


def test_a_sigkilled_bingo_leaves_no_plugin_nor_janitor_behind(tmp_path: Path) -> None:
    # a stand-in for bingo: spawns a plugin the way the host does, says the pids, then waits
    host = textwrap.dedent(
        f"""
        import asyncio, os, sys
        from pathlib import Path
        from bingo.bridge.process import PluginLog, PluginProcess
        async def main():
            proc = await PluginProcess.spawn(
                [sys.executable, "-c", "import os, time; print(os.getpid(), flush=True); time.sleep(60)"],
                env=dict(os.environ), cwd=Path({str(tmp_path)!r}), log=PluginLog(Path({str(tmp_path / "p.log")!r})))
            plugin = int(await proc.stdout.readline())
            print(proc.pid, plugin, flush=True)
            await asyncio.sleep(60)
        asyncio.run(main())
        """
    )
    with subprocess.Popen([sys.executable, "-c", host], stdout=subprocess.PIPE) as bingo:
        assert bingo.stdout is not None
        warden, plugin = (int(pid) for pid in bingo.stdout.readline().split())
        janitor = _parent(warden)
        assert _parent(plugin) == warden and _parent(janitor) == bingo.pid
        assert all(procfs.alive(pid) for pid in (janitor, warden, plugin))
        bingo.kill()
        bingo.wait(5)

    asyncio.run(_gone(janitor, warden, plugin))


@pytest.mark.parametrize("janitor", PATHS)
def test_an_exit_code_and_a_signal_are_reported_as_the_plugin_ended(tmp_path: Path, janitor: bool) -> None:
    async def main() -> list[tuple[str, int | None]]:
        found: list[tuple[str, int | None]] = []
        for script in ("raise SystemExit(3)", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"):
            proc = await _spawn(script, tmp_path, janitor=janitor)
            async with asyncio.timeout(5), proc:
                assert await proc.stdout.read() == b""
                found.append((await proc.ended(), proc.returncode))
        return found

    assert asyncio.run(main()) == [("exited with code 3", 3), ("was killed by SIGTERM", -signal.SIGTERM)]


def test_a_plugin_ending_as_its_warden_is_told_to_end_is_reported_as_it_ended(tmp_path: Path) -> None:
    # The plugin exits at EOF just as its warden gets SIGTERM (what bingo's death does to
    # both at once): how it ended must not be lost in the race, nor take the warden's grace.
    async def main() -> list[tuple[str, float]]:
        found: list[tuple[str, float]] = []
        for _ in range(12):
            proc = await _spawn("import os, sys; sys.stdin.read(); os._exit(5)", tmp_path)
            async with asyncio.timeout(10), proc:
                proc.stdin.close()
                os.kill(proc.pid, signal.SIGTERM)
                start = time.monotonic()
                how = await proc.ended()
                found.append((how, time.monotonic() - start))
        return found

    for how, seconds in asyncio.run(main()):
        assert how in ("exited with code 5", "was killed by SIGTERM")
        assert seconds < 0.9


def test_a_child_that_left_the_plugins_session_dies_when_the_plugin_exits(tmp_path: Path) -> None:
    # The child escapes the group (setsid), ignores SIGTERM and lets go of the pipes; the
    # plugin says its pid, then exits when told to.
    script = textwrap.dedent(
        """
        import os, signal, sys, time
        r, w = os.pipe()
        if os.fork() == 0:
            os.setsid()
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            os.write(w, b"%d\\n" % os.getpid())
            for fd in (0, 1, 2):
                os.close(fd)
            time.sleep(60)
        os.close(w)
        print(os.read(r, 100).decode().strip(), flush=True)
        sys.stdin.readline()
        """
    )

    async def main() -> None:
        proc = await _spawn(script, tmp_path)
        async with asyncio.timeout(5), proc:
            escaped = int(await proc.stdout.readline())
            assert procfs.alive(escaped) and os.getsid(escaped) == escaped
            proc.stdin.write(b"go\n")
            assert await proc.ended() == "exited with code 0"  # its warden has swept by then
            assert not procfs.alive(escaped)

    asyncio.run(main())


@pytest.mark.parametrize("janitor", PATHS)
def test_a_missing_command_is_an_os_error_at_spawn(tmp_path: Path, janitor: bool) -> None:
    async def main() -> None:
        with pytest.raises(FileNotFoundError):
            await PluginProcess.spawn(
                ["no-such-command-here"],
                env={"PATH": str(tmp_path)},
                cwd=tmp_path,
                log=PluginLog(tmp_path / "p.log"),
                janitor=janitor,
            )

    asyncio.run(main())


def test_twenty_plugins_start_at_once_under_one_janitor(tmp_path: Path) -> None:
    script = "import sys; sys.stdout.write(sys.stdin.readline())"

    async def one(n: int) -> tuple[int, bytes]:
        proc = await _spawn(script, tmp_path)
        async with proc:
            # Its parent is read while it waits for its line: once answered, it exits (and is reaped).
            parent = _parent(proc.pid)
            proc.stdin.write(b"%d\n" % n)
            return parent, await proc.stdout.readline()

    async def main() -> list[tuple[int, bytes]]:
        async with asyncio.timeout(5):
            return await asyncio.gather(*(one(n) for n in range(20)))

    answers = asyncio.run(main())
    assert [line for _, line in answers] == [b"%d\n" % n for n in range(20)]
    assert len({janitor for janitor, _ in answers}) == 1


def test_when_the_janitor_dies_its_plugins_end_and_the_next_spawn_starts_another(tmp_path: Path) -> None:
    async def main() -> tuple[str, int, int]:
        proc = await _spawn("import time; time.sleep(60)", tmp_path)
        async with asyncio.timeout(5), proc:
            janitor = _parent(proc.pid)
            os.kill(janitor, signal.SIGKILL)
            assert await proc.stdout.read() == b""  # the plugin went with it
            how = await proc.ended()
        # It stays until its stdin closes, so its warden is there to be asked about.
        again = await _spawn("import sys; print('up', flush=True); sys.stdin.read()", tmp_path)
        async with asyncio.timeout(5), again:
            assert await again.stdout.readline() == b"up\n"
            return how, janitor, _parent(again.pid)

    how, first, second = asyncio.run(main())
    assert how == "closed its stdout"
    assert first != second


def test_a_plugin_runs_on_the_cpus_bingo_runs_on_when_it_is_spawned(tmp_path: Path) -> None:
    before = os.sched_getaffinity(0)
    if len(before) < 2:
        pytest.skip("one CPU: nothing to choose")
    script = "import os; print(sorted(os.sched_getaffinity(0)), flush=True)"

    async def main() -> list[bytes]:
        seen: list[bytes] = []
        for cpus in ({min(before)}, before):
            os.sched_setaffinity(0, cpus)
            proc = await _spawn(script, tmp_path)
            async with asyncio.timeout(5), proc:
                seen.append(await proc.stdout.readline())
        return seen

    try:
        seen = asyncio.run(main())
    finally:
        os.sched_setaffinity(0, before)
    assert seen == [f"{[min(before)]}\n".encode(), f"{sorted(before)}\n".encode()]


# --- which stderr line a notice quotes ------------------------------------------------

NODE_MISSING_MODULE = [
    "node:internal/modules/cjs/loader:1228",
    "throw err;",
    "^",
    "Error: Cannot find module 'left-pad'",
    "Require stack:",
    "- /p/main.js",
    "at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)",
    "code: 'MODULE_NOT_FOUND',",
    "}",
    "Node.js v20.20.2",
]
PYTHON_TRACEBACK = [
    "Traceback (most recent call last):",
    'File "/p/main.py", line 3, in <module>',
    "import left_pad",
    "ModuleNotFoundError: No module named 'left_pad'",
]


@pytest.mark.parametrize(
    ("lines", "quoted"),
    [
        (NODE_MISSING_MODULE, "Error: Cannot find module 'left-pad'"),
        (PYTHON_TRACEBACK, "ModuleNotFoundError: No module named 'left_pad'"),
        # A chained traceback: its last exception is the one that ended the process.
        (
            ["KeyError: 'a'", "During handling of the above exception, another exception occurred:", "ValueError: bad"],
            "ValueError: bad",
        ),
        (["zoo: starting", "TypeError: x is not a function", "Node.js v20.20.2"], "TypeError: x is not a function"),
        (["uncaught Exception: boom", "bye"], "uncaught Exception: boom"),
        (["starting", "about to die"], "about to die"),
        (["Errors: none so far", "bye"], "bye"),
        ([], ""),
    ],
)
def test_a_notice_quotes_the_most_useful_of_the_last_stderr_lines(lines: list[str], quoted: str) -> None:
    assert useful_stderr_line(lines) == quoted


@pytest.mark.parametrize("janitor", PATHS)
def test_the_error_line_is_kept_under_a_long_stack_and_said_as_picked(tmp_path: Path, janitor: bool) -> None:
    stack = "".join(f"    at frame{i} (x.js:{i})\\n" for i in range(15))
    script = f"import sys; sys.stderr.write('noise\\n' * 500 + 'Error: Cannot find module \\'x\\'\\n{stack}' + 'x' * 1000 + '\\nNode.js v20\\n')"

    async def main() -> tuple[str, str]:
        proc = await _spawn(script, tmp_path, janitor=janitor)
        async with asyncio.timeout(5), proc:
            await proc.ended()
        return proc.last_stderr, proc.stderr_words()

    last, words = asyncio.run(main())
    assert last == "Error: Cannot find module 'x'"
    assert words == "its stderr said: \"Error: Cannot find module 'x'\""
