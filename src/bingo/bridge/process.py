"""The plugin process: spawning it, its stderr log, how it ended, and shutting it down.

Owns one child process and everything it leaves behind: the process group it leads (so its
own children go with it), the parent-death signal (so a SIGKILLed bingo leaves no plugin
behind), the task that appends its stderr to `<data_dir>/logs/plugin-<name>.log` (rotated
at a bound, never the terminal) and remembers the last line, the words for how it ended, and
the bounded, cancellation-proof shutdown: close stdin, wait, SIGTERM the group, wait,
SIGKILL the group.

On Linux every plugin runs under the janitor (`_janitor.py`), a tiny subreaper parent that
kills whatever the plugin started when the plugin ends, and everything when bingo dies (its
parent-death signal): a group kill alone misses a child that left the group, and the
parent-death signal is not inherited across fork.

It does not speak JSON-RPC: it hands its stdout and stdin to a Connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ._framing import MAX_LINE

__all__ = [
    "END_WAIT",
    "EXIT_GRACE",
    "KILL_WAIT",
    "LOG_BACKUPS",
    "LOG_MAX_BYTES",
    "TERM_GRACE",
    "PluginLog",
    "PluginProcess",
    "describe_exit",
]

_log = logging.getLogger(__name__)

EXIT_GRACE = 2.0
"""Seconds a plugin has to exit by itself once its stdin is closed."""
TERM_GRACE = 2.0
"""Seconds its process group has to exit after SIGTERM, before SIGKILL."""
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
"""Characters of the last stderr line kept for notices."""

_PR_SET_PDEATHSIG = 1


_JANITOR = Path(__file__).with_name("_janitor.py")
"""The subreaper parent every plugin runs under on Linux (run as a script, never imported)."""
_JANITOR_GRACE = 0.5
"""The share of TERM_GRACE the janitor gives a plugin between SIGTERM and SIGKILL, so that
it is done (and has swept the plugin's descendants) before bingo would SIGKILL the group."""


def _parent_death_signal() -> Callable[[], None] | None:
    """A `preexec_fn` asking Linux to SIGTERM the child (the janitor) when bingo dies.

    Why a preexec_fn (which the docs warn about with threads): it is the only way to make
    the *child* call prctl(PR_SET_PDEATHSIG) between fork and exec, and without it a
    SIGKILLed bingo (which runs no shutdown) would leave every plugin running. The function
    is resolved before forking and only calls prctl and getppid, which are async-signal
    safe. Children the plugin forks do not inherit the setting: the child is the janitor,
    which on that SIGTERM kills the plugin and every descendant (see `_janitor.py`)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:  # bingo died before prctl took effect
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec


_PREEXEC = _parent_death_signal()


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


def _group_has_living(pgid: int) -> bool:
    """Whether a process group has a member that is not a zombie. A killed grandchild stays
    a zombie until init reaps it, which some inits do slowly; signalling the group succeeds
    until then, so on Linux /proc is asked instead."""
    proc = Path("/proc")
    if not sys.platform.startswith("linux"):
        return True
    try:
        entries = [entry for entry in os.listdir(proc) if entry.isdigit()]
    except OSError:
        return True
    for entry in entries:
        try:
            stat = (proc / entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


def _under_janitor(argv: Sequence[str], env: dict[str, str], cwd: Path) -> list[str]:
    """`argv` run under the janitor (Linux), after checking that its command can be run, so
    that a missing command is still an OSError here and not an exit status later.

    Raises:
        OSError: the command cannot be found or is not executable.
    """
    if _PREEXEC is None or not _JANITOR.is_file():
        return list(argv)
    command = argv[0]
    if os.sep in command:
        found: str | None = str(cwd / command) if os.access(cwd / command, os.X_OK) else None
    else:
        found = shutil.which(command, path=env.get("PATH", os.defpath))
    if found is None:
        raise FileNotFoundError(2, "No such file or directory", command)
    grace = f"{TERM_GRACE * _JANITOR_GRACE:g}"
    return [sys.executable, "-I", "-S", str(_JANITOR), grace, "--", found, *argv[1:]]


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
        """Append one line of the host's own (a start marker, a stray stdout line)."""
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        self.write(f"[bingo {stamp}] {text}\n".encode("utf-8", "replace"))


class PluginProcess:
    """One running plugin process. Use as `async with` (after `spawn`): leaving shuts the
    process and its group down, boundedly, even when cancelled."""

    def __init__(self, proc: asyncio.subprocess.Process, log: PluginLog) -> None:
        self._proc = proc
        self.log = log
        self.pid = proc.pid
        self.last_stderr = ""
        self.started = time.monotonic()
        self._stderr_task: asyncio.Task[None] | None = None
        assert proc.stdout is not None and proc.stdin is not None
        self.stdout: asyncio.StreamReader = proc.stdout
        self.stdin: asyncio.StreamWriter = proc.stdin

    @classmethod
    async def spawn(
        cls, argv: Sequence[str], *, env: dict[str, str], cwd: Path, log: PluginLog
    ) -> PluginProcess:
        """Start `argv` in its own session and process group.

        Raises:
            OSError: the command cannot be run.
        """
        await asyncio.to_thread(log.line, f"starting {' '.join(argv)}")
        proc = await asyncio.create_subprocess_exec(
            *_under_janitor(argv, env, cwd),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            cwd=cwd,
            limit=MAX_LINE,
            start_new_session=True,
            preexec_fn=_PREEXEC,
        )
        return cls(proc, log)

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode

    async def __aenter__(self) -> PluginProcess:
        self._stderr_task = asyncio.create_task(self._read_stderr())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.shutdown()

    async def _read_stderr(self) -> None:
        stderr = self._proc.stderr
        assert stderr is not None
        partial = b""
        while True:
            chunk = await stderr.read(65536)
            if not chunk:
                break
            await asyncio.to_thread(self.log.write, chunk)
            lines = (partial + chunk).split(b"\n")
            partial = lines.pop()[-4096:]
            for line in reversed(lines):
                text = line.decode("utf-8", "replace").strip()
                if text:
                    self.last_stderr = text[:_LAST_LINE_MAX]
                    break
        if partial.strip():
            self.last_stderr = partial.decode("utf-8", "replace").strip()[:_LAST_LINE_MAX]

    async def ended(self) -> str:
        """How the process ended, waiting up to END_WAIT for it to exit (its stdout is
        closed when this is asked) and for its last stderr to be read."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(END_WAIT):
                await self._proc.wait()
                if self._stderr_task is not None:
                    await asyncio.shield(self._stderr_task)
        return describe_exit(self._proc.returncode)

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
                await self._proc.wait()
                while self._signal_group(0) and _group_has_living(self.pid):
                    await asyncio.sleep(_GROUP_POLL)
                return True
        return False

    async def shutdown(self) -> None:
        """Close stdin, wait; SIGTERM the group, wait; SIGKILL the group. Bounded by
        EXIT_GRACE + TERM_GRACE + KILL_WAIT; if cancelled midway, the group is SIGKILLed at
        once before the cancellation goes on."""
        try:
            with contextlib.suppress(OSError, RuntimeError):
                self.stdin.close()
            if not await self._group_gone(EXIT_GRACE):
                self._signal_group(signal.SIGTERM)
                if not await self._group_gone(TERM_GRACE):
                    self._signal_group(signal.SIGKILL)
                    await self._group_gone(KILL_WAIT)
        except asyncio.CancelledError:
            self._signal_group(signal.SIGKILL)
            raise
        finally:
            if self._stderr_task is not None:
                # Its last lines are worth a moment; a grandchild that escaped the group
                # could hold stderr open for ever, so only a moment.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(_STDERR_DRAIN):
                        await asyncio.shield(self._stderr_task)
                self._stderr_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._stderr_task
