"""The plugin process: spawning it, its stderr log, how it ended, and shutting it down.

Owns one plugin process and everything it leaves behind: the process group it runs in (so
its own children go with it), the task that appends its stderr to
`<data_dir>/logs/plugin-<name>.log` (rotated at a bound, never the terminal) and remembers
the last line, the words for how it ended, and the bounded, cancellation-proof shutdown:
close stdin, wait, SIGTERM the group, wait, SIGKILL the group.

A plugin is started one of two ways, the same from here on: on Linux by the run's one
janitor (`janitor/`, ADR-0013), through a small *warden* it forks per plugin: the warden
leads the plugin's process group (its pid is `PluginProcess.pid`), is a child subreaper that
kills whatever the plugin started when the plugin ends, and exits the way the plugin did;
the janitor reports that exit and, when bingo dies, ends every plugin and every descendant
(a group kill alone misses a child that left the group, and the parent-death signal is not
inherited across fork). Elsewhere (and in the tests of that path, through `spawn`'s
`janitor=False`) the plugin is spawned directly in a session of its own. Both ways are the
sandbox's `start` (`sandbox/_process.py`), which a command hook is started by too.

It does not speak JSON-RPC (it hands its stdout and stdin to a Connection), nor the
janitor's protocol (`janitor.JanitorClient`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from ..kernel.log import RECORD_MAX, cut
from ..sandbox import Policy, resolve, start
from ..sandbox.janitor import USE_JANITOR
from ..sandbox.janitor.proc import group_has_living
from . import _problems as P

__all__ = [
    "END_WAIT",
    "EXIT_GRACE",
    "INSTALL_GRACE",
    "KILL_WAIT",
    "LOG_BACKUPS",
    "LOG_MAX_BYTES",
    "TERM_GRACE",
    "PluginLog",
    "PluginProcess",
    "describe_exit",
    "resolve",
    "useful_stderr_line",
]

_log = logging.getLogger(__name__)

EXIT_GRACE = 2.0
"""Seconds a plugin has to exit by itself once its stdin is closed."""
TERM_GRACE = 2.0
"""Seconds its process group has to exit after SIGTERM, before SIGKILL. A warden gives its
plugin half of it (read at each spawn), so it has ended the plugin and swept before bingo
would SIGKILL the group."""
INSTALL_GRACE = 30.0
"""Seconds a package runner that may be installing (`PluginProcess.installing`) has after its
one SIGTERM, before SIGKILL: npm finishes the step under way, then rolls its install back; a
second signal or a SIGKILL in the middle leaves its cache broken (ADR-0036). Its warden is
given as long (at spawn)."""
KILL_WAIT = 2.0
"""Seconds to wait for the reaping after SIGKILL (the kernel does not refuse it)."""
END_WAIT = 1.0
"""Seconds to wait, after stdout closes, to learn how the process ended."""
LOG_MAX_BYTES = 1024 * 1024
"""A plugin log is rotated when it grows past this (1 MiB)."""
LOG_BACKUPS = 1
"""Rotated logs kept beside the current one (`.1`): at most 2 files per plugin."""
_GROUP_POLL = 0.05
"""Seconds between checks that a process group is empty (its members are not our children,
so there is no event to wait on)."""
_STDERR_DRAIN = 0.5
"""Seconds to let the stderr reader finish once the group is gone."""
_LAST_LINE_MAX = 300
"""Characters of each of the last stderr lines kept for notices."""
_LAST_LINES = 20
"""Stderr lines kept for notices: enough to hold a Node crash's `Error:` line under its
stack, or a Python traceback's last frames and its exception."""
_EXCEPTION_LINE = re.compile(r"^\w+(Error|Exception)\b")
_ERROR_LINE = re.compile(r"\b(Error|Exception):")


def useful_stderr_line(lines: Sequence[str]) -> str:
    """The line of a process's last stderr `lines` a notice quotes: the last that names an
    exception (`ModuleNotFoundError: ...`, a Python traceback's last words), else the first
    with `Error:` (Node's `Error: Cannot find module ...`, above its stack and its
    `Node.js v20` line), else the last line; "" for none."""
    for line in reversed(lines):
        if _EXCEPTION_LINE.match(line):
            return line
    for line in lines:
        if _ERROR_LINE.search(line):
            return line
    return lines[-1] if lines else ""


def describe_exit(returncode: int | None) -> str:
    """How a process ended, in words: `exited with code 3`, `was killed by SIGKILL`."""
    if returncode is None:
        return "closed its stdout"
    if returncode >= 0:
        return f"exited with code {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    return f"was killed by {name}"


class PluginLog:
    """A plugin's log file, appended to and rotated at `max_bytes` (blocking: call it off
    the loop for anything but a rare line)."""

    def __init__(self, path: Path, *, max_bytes: int = LOG_MAX_BYTES) -> None:
        self.path = path
        self._max_bytes = max_bytes

    def write(self, data: bytes) -> None:
        """Append `data`, rotating first when the file is full."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                size = self.path.stat().st_size
            except FileNotFoundError:
                size = 0
            if size and size + len(data) > self._max_bytes:
                os.replace(self.path, self.path.with_name(self.path.name + ".1"))
            with self.path.open("ab") as file:
                file.write(data[-self._max_bytes :])
        except OSError as exc:
            _log.warning("cannot write %s: %s", self.path, exc)

    def line(self, text: str) -> None:
        """Append one line of the host's own (a start marker, a stray stdout line), cut to
        RECORD_MAX should a foreign value in it have been left whole."""
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        self.write(f"[bingo {stamp}] {cut(text, RECORD_MAX)}\n".encode("utf-8", "replace"))


class PluginProcess:
    """One running plugin process. Use as `async with` (after `spawn`): leaving shuts the
    process and its group down, boundedly, even when cancelled."""

    def __init__(
        self,
        *,
        pid: int,
        stdin: asyncio.StreamWriter,
        stdout: asyncio.StreamReader,
        stderr: asyncio.StreamReader,
        wait: Callable[[], Awaitable[object]],
        returncode: Callable[[], int | None],
        log: PluginLog,
    ) -> None:
        self.log = log
        self.pid = pid
        """The process group's id: the warden's pid (or the plugin's, without a janitor)."""
        self._stderr_lines: deque[str] = deque(maxlen=_LAST_LINES)
        self.stderr_bytes = 0
        self.on_fault: Callable[[str, str], None] | None = None
        """Told (key, what) once for each misbehaviour only this layer sees."""
        self.deaf = False
        """Set when it is known not to read its stdin: its shutdown begins with SIGTERM, and
        its SIGTERM is no fault to report (why it was stopped was said already)."""
        self.installing = False
        """Set while it may be installing what it runs (a package runner before its
        handshake): its shutdown sends ONE SIGTERM, to the process alone (through its
        warden), and waits INSTALL_GRACE before SIGKILL; nothing of it is a fault."""
        self.warden = False
        """Started through the janitor: its pid is its warden's, which ends it (SIGTERM, its
        grace, SIGKILL) and whatever it started."""
        self.started = time.monotonic()
        self.stdout = stdout
        self.stdin = stdin
        self._stderr = stderr
        self._wait = wait
        self._returncode = returncode
        self._stderr_task: asyncio.Task[None] | None = None

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        env: dict[str, str],
        cwd: Path,
        log: PluginLog,
        janitor: bool = USE_JANITOR,
        policy: Policy | None = None,
        grace: float = TERM_GRACE / 2,
    ) -> PluginProcess:
        """Start `argv` in its own session and process group: through the run's janitor
        where there is one (`janitor`), else directly; confined by `policy` when one is
        given (ADR-0030: only through the janitor). Its warden gives it `grace` seconds
        between SIGTERM and SIGKILL (by default half of TERM_GRACE, so it is done before
        bingo would SIGKILL the group).

        Raises:
            OSError: the command cannot be run, or not confined as asked.
        """
        if not janitor and policy is None:
            log.line(f"starting {' '.join(argv)}")  # inline, as below (a command not found is logged too)
        started = await start(argv, env=env, cwd=cwd, grace=grace, janitor=janitor, policy=policy)
        if janitor:
            # Before its stderr is read, so the plugin's own lines follow this one. Inline, not
            # through a thread: one short append, and a hop costs far more (ADR-0003).
            log.line(f"starting {' '.join(argv)}")
        made = cls(
            pid=started.pid,
            stdin=started.stdin,
            stdout=started.stdout,
            stderr=started.stderr,
            wait=started.wait,
            returncode=started.returncode,
            log=log,
        )
        made.warden = started.warden
        return made

    @property
    def returncode(self) -> int | None:
        return self._returncode()

    @property
    def last_stderr(self) -> str:
        """The most useful of the last stderr lines (`useful_stderr_line`), "" for none."""
        return useful_stderr_line(self._stderr_lines)

    def stderr_words(self) -> str:
        """`its last stderr line: '...'` (or the line it picked from the last ones), escaped
        by repr; "" when it wrote nothing to stderr."""
        chosen = self.last_stderr
        if not chosen:
            return ""
        last = self._stderr_lines[-1]
        return f"its last stderr line: {chosen!r}" if chosen == last else f"its stderr said: {chosen!r}"

    async def __aenter__(self) -> PluginProcess:
        self._stderr_task = asyncio.create_task(self._read_stderr())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.shutdown()

    async def _read_stderr(self) -> None:
        stderr = self._stderr
        partial = b""
        while True:
            chunk = await stderr.read(65536)
            if not chunk:
                break
            await asyncio.to_thread(self.log.write, chunk)
            before, self.stderr_bytes = self.stderr_bytes, self.stderr_bytes + len(chunk)
            if before <= LOG_MAX_BYTES < self.stderr_bytes:
                self._fault(P.STDERR_FLOOD.key, P.STDERR_FLOOD.said(mib=LOG_MAX_BYTES // 1024 // 1024))
            lines = (partial + chunk).split(b"\n")
            partial = lines.pop()[-4096:]
            self._keep(lines[-_LAST_LINES:])
        self._keep([partial])

    def _keep(self, lines: Sequence[bytes]) -> None:
        """Keep the non-blank of `lines` among the last stderr lines, each cut short."""
        for line in lines:
            text = line.decode("utf-8", "replace").strip()
            if text:
                self._stderr_lines.append(text[:_LAST_LINE_MAX])

    def _fault(self, key: str, what: str) -> None:
        if self.on_fault is not None:
            self.on_fault(key, what)

    async def ended(self) -> str:
        """How the process ended, waiting up to END_WAIT for it to exit (its stdout is
        closed when this is asked) and for its last stderr to be read."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(END_WAIT):
                await self._wait()
                if self._stderr_task is not None:
                    await asyncio.shield(self._stderr_task)
        return describe_exit(self.returncode)

    def _signal_group(self, sig: int) -> bool:
        """Send `sig` to the process group; False when the group is empty."""
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:
            return False
        except PermissionError:
            return False
        return True

    async def _group_gone(self, seconds: float) -> bool:
        """Wait up to `seconds` for every member of the group (the leader reaped) to exit."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._wait()
                while self._signal_group(0) and group_has_living(self.pid):
                    await asyncio.sleep(_GROUP_POLL)
                return True
        return False

    async def shutdown(self) -> None:
        """Close stdin, wait (not when `deaf`); SIGTERM the group, wait; SIGKILL the group.
        Bounded by EXIT_GRACE + TERM_GRACE + KILL_WAIT; if cancelled midway, the group is
        SIGKILLed at once before the cancellation goes on."""
        if self.installing:
            await self._stop_installing()
            return
        try:
            with contextlib.suppress(OSError, RuntimeError):
                self.stdin.close()
            # One that does not read its stdin would not see it close: SIGTERM at once.
            if self.deaf or not await self._group_gone(EXIT_GRACE):
                self._signal_group(signal.SIGTERM)
                if not await self._group_gone(TERM_GRACE):
                    self._signal_group(signal.SIGKILL)
                    await self._group_gone(KILL_WAIT)
                    closing = "" if self.deaf else f"within {EXIT_GRACE:g} s of its stdin closing, nor "
                    self._fault(P.IGNORES_STOP_KILLED.key, P.IGNORES_STOP_KILLED.said(closing=closing))
                elif not self.deaf:
                    self._fault(P.IGNORES_STOP_TERM.key, P.IGNORES_STOP_TERM.said(grace=EXIT_GRACE))
        except asyncio.CancelledError:
            self._signal_group(signal.SIGKILL)
            raise
        finally:
            await self._drain_stderr()

    async def _stop_installing(self) -> None:
        """The shutdown of a package runner that may be in the middle of an install: one
        SIGTERM to it alone (npm rolls its install back on the first and dies mid-way on a
        second, and killpg would send its warden's on top), INSTALL_GRACE for it to finish,
        then SIGKILL. Bounded by INSTALL_GRACE + TERM_GRACE + KILL_WAIT. Cancelled midway, it
        is left to its warden, which SIGKILLs it when its grace is out; without a warden the
        group is SIGKILLed at once."""
        try:
            with contextlib.suppress(OSError, RuntimeError):
                self.stdin.close()
            # Its warden forwards this one SIGTERM and SIGKILLs after INSTALL_GRACE (it was
            # spawned with that grace); without one, the pid is the process itself.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGTERM)
            if not await self._group_gone(INSTALL_GRACE + TERM_GRACE):
                self._signal_group(signal.SIGKILL)
                await self._group_gone(KILL_WAIT)
        except asyncio.CancelledError:
            if not self.warden:
                self._signal_group(signal.SIGKILL)
            raise
        finally:
            await self._drain_stderr()

    async def _drain_stderr(self) -> None:
        if self._stderr_task is not None:
            # Its last lines are worth a moment; a grandchild that escaped the group could
            # hold stderr open for ever, so only a moment.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_STDERR_DRAIN):
                    await asyncio.shield(self._stderr_task)
            self._stderr_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._stderr_task
