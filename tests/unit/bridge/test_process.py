"""One plugin process: its log, how it ended, and a shutdown that leaves nothing behind."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bingo.bridge import process
from bingo.bridge.process import PluginLog, PluginProcess, describe_exit


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


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


def test_stderr_goes_to_the_log_and_its_last_line_is_kept(tmp_path: Path) -> None:
    script = "import sys; sys.stderr.write('first\\nlast words\\n'); sys.stdout.write('out\\n')"

    async def main() -> tuple[str, str, bytes]:
        log = PluginLog(tmp_path / "p.log")
        proc = await PluginProcess.spawn([sys.executable, "-c", script], env=dict(os.environ), cwd=tmp_path, log=log)
        async with asyncio.timeout(5), proc:
            out = await proc.stdout.readline()
            how = await proc.ended()
        return how, proc.last_stderr, out

    how, last, out = asyncio.run(main())
    assert (how, last, out) == ("exited with code 0", "last words", b"out\n")
    text = (tmp_path / "p.log").read_text()
    assert "first\nlast words\n" in text and "[bingo " in text


def test_a_process_that_ignores_stdin_and_sigterm_is_killed_with_its_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(process, "EXIT_GRACE", 0.05)
    monkeypatch.setattr(process, "TERM_GRACE", 0.05)
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
        log = PluginLog(tmp_path / "p.log")
        proc = await PluginProcess.spawn([sys.executable, "-c", script], env=dict(os.environ), cwd=tmp_path, log=log)
        async with asyncio.timeout(5), proc:
            pids.append(int(await proc.stdout.readline()))
            pids.extend(int(p) for p in Path(f"/proc/{pids[0]}/task/{pids[0]}/children").read_text().split())
        return proc.returncode

    assert asyncio.run(main()) == -signal.SIGKILL
    assert len(pids) == 2 and not any(_alive(pid) for pid in pids)


def test_a_sigkilled_bingo_leaves_no_plugin_behind(tmp_path: Path) -> None:
    # a stand-in for bingo: spawns a plugin the way the host does, says its pid, then waits
    host = textwrap.dedent(
        f"""
        import asyncio, os, sys
        from pathlib import Path
        from bingo.bridge.process import PluginLog, PluginProcess
        async def main():
            proc = await PluginProcess.spawn(
                [sys.executable, "-c", "import time; time.sleep(60)"], env=dict(os.environ),
                cwd=Path({str(tmp_path)!r}), log=PluginLog(Path({str(tmp_path / "p.log")!r})))
            print(proc.pid, flush=True)
            await asyncio.sleep(60)
        asyncio.run(main())
        """
    )
    with subprocess.Popen([sys.executable, "-c", host], stdout=subprocess.PIPE) as bingo:
        assert bingo.stdout is not None
        plugin = int(bingo.stdout.readline())
        assert _alive(plugin)
        bingo.kill()
        bingo.wait(5)

    async def gone() -> None:
        async with asyncio.timeout(5):
            while _alive(plugin):
                await asyncio.sleep(0.01)  # not our child: no event to wait on

    asyncio.run(gone())
