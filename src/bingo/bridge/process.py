"""The plugin process: spawning it, its stderr log, how it ended, and shutting it down.

Owns one plugin process and everything it leaves behind: the process group it runs in (so
its own children go with it), the task that appends its stderr to
`<data_dir>/logs/plugin-<name>.log` (rotated at a bound, never the terminal) and remembers
the last line, the words for how it ended, and the bounded, cancellation-proof shutdown:
close stdin, wait, SIGTERM the group, wait, SIGKILL the group.

On Linux every plugin is started by the run's one janitor (`_janitor.py`, started lazily
with the first spawn, by posix_spawn: no fork of bingo, no preexec_fn), through a small
*warden* it forks per plugin: the warden leads the plugin's process group (its pid is
`PluginProcess.pid`), is a child subreaper that kills whatever the plugin started when the
plugin ends, and exits the way the plugin did; the janitor reports that exit here and, when
bingo dies (EOF on its control socket, or its parent-death signal), ends every plugin and
every descendant. A group kill alone misses a child that left the group, and the
parent-death signal is not inherited across fork. bingo makes the plugin's three pipes and
passes their far ends to the janitor (SCM_RIGHTS), so the streams are bingo's own from the
start. Elsewhere the plugin is spawned directly in a session of its own.

The janitor is started from its cached bytecode (`_JANITOR`, ADR-0013), not run as a script,
which would compile its source at every start.

It does not speak JSON-RPC: it hands its stdout and stdin to a Connection.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import itertools
import logging
import marshal
import os
import shutil
import signal
import socket
import sys
import threading
import time
from asyncio.streams import FlowControlMixin
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path

import msgspec

from ..kernel.log import RECORD_MAX, cut
from ._framing import MAX_LINE

__all__ = [
    "END_WAIT",
    "EXIT_GRACE",
    "KILL_WAIT",
    "LOG_BACKUPS",
    "LOG_MAX_BYTES",
    "SPAWN_WAIT",
    "TERM_GRACE",
    "USE_JANITOR",
    "WARDEN_GRACE",
    "PluginLog",
    "PluginProcess",
    "describe_exit",
    "resolve",
    "spawn_janitor",
    "start_janitor",
]

_log = logging.getLogger(__name__)

WARDEN_GRACE = 1.0
"""Seconds a warden gives its plugin between SIGTERM and SIGKILL (half of TERM_GRACE: it is
done, and has swept, before the host would SIGKILL the group)."""
EXIT_GRACE = 2.0
"""Seconds a plugin has to exit by itself once its stdin is closed."""
TERM_GRACE = 2 * WARDEN_GRACE
"""Seconds its process group has to exit after SIGTERM, before SIGKILL: twice what a warden
gives its plugin, so the warden has ended it and swept before bingo would SIGKILL the group."""
KILL_WAIT = 2.0
"""Seconds to wait for the reaping after SIGKILL (the kernel does not refuse it)."""
END_WAIT = 1.0
"""Seconds to wait, after stdout closes, to learn how the process ended."""
SPAWN_WAIT = 10.0
"""Seconds the janitor has to say it started a plugin (the first spawn includes the
janitor's own start, which a loaded machine makes slow)."""
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

USE_JANITOR = sys.platform.startswith("linux") and hasattr(os, "posix_spawn")
"""Whether plugins are started through the run's janitor (Linux) or directly."""
_JANITOR = (
    f"import sys; sys.path.append({os.path.dirname(os.path.abspath(__file__))!r}); "
    "import _janitor; _janitor.main(sys.argv[1:])"
)
"""How the janitor is started (`python -I -S -c _JANITOR FD PID MAIN`): imported from this
directory, put last on its path (after the standard library, which it alone imports), so
that its bytecode is the cached one; run as a script, it would compile its source at every
start, as long again as the rest of that start."""


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


def resolve(argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> str:
    """The path of `argv`'s command, checked here so that a missing command (or working
    directory) is an OSError at spawn and not an exit status later.

    Raises:
        OSError: the command cannot be found or is not executable, or `cwd` is missing.
    """
    if not cwd.is_dir():
        raise FileNotFoundError(2, "No such file or directory", str(cwd))
    command = argv[0]
    if os.sep in command:
        found: str | None = str(cwd / command) if os.access(cwd / command, os.X_OK) else None
    else:
        found = shutil.which(command, path=env.get("PATH", os.defpath))
    if found is None:
        raise FileNotFoundError(2, "No such file or directory", command)
    return found


def _kill(warden: int) -> None:
    """SIGKILL a plugin's group and its warden (which may not lead a group yet: then the
    plugin dies with it, by its parent-death signal, and the janitor sweeps the rest)."""
    with contextlib.suppress(OSError):
        os.killpg(warden, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.kill(warden, signal.SIGKILL)


class _Outgoing(msgspec.Struct):
    """A frame waiting to be written to the janitor, with the fds its first byte carries."""

    data: bytes
    fds: list[int]
    started: bool = False


_Field = str | int | float | list[str] | list[int] | dict[str, str]
"""What a message to the janitor is made of: only what `marshal` carries."""


def _frame(message: tuple[_Field, ...]) -> bytes:
    """One message to the janitor: a 4-byte big-endian length, then the marshalled tuple."""
    data = marshal.dumps(message)
    return len(data).to_bytes(4, "big") + data


def _spawn_request(request_id: int, path: str, argv: Sequence[str], env: Mapping[str, str], cwd: str) -> bytes:
    """The janitor's `spawn` message: the plugin runs on the CPUs bingo runs on now (the
    janitor's own may be older), and its warden gives it WARDEN_GRACE."""
    cpus = sorted(os.sched_getaffinity(0))
    return _frame(("spawn", request_id, path, list(argv), dict(env), cwd, WARDEN_GRACE, cpus))


def spawn_janitor() -> tuple[int, socket.socket]:
    """posix_spawn a janitor (no fork of bingo, whatever its size), its stdio on /dev/null,
    in a session of its own (a terminal's Ctrl-C is bingo's to handle); its pid and bingo's
    end of the control socket (blocking).

    Raises:
        OSError: it cannot be started.
    """
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        os.set_inheritable(theirs.fileno(), True)
        # Its parent-death signal follows the thread that spawned it: only the main thread
        # is sure to live as long as bingo (EOF on the socket covers the rest).
        main = "1" if threading.current_thread() is threading.main_thread() else "0"
        argv = [sys.executable, "-I", "-S", "-c", _JANITOR, str(theirs.fileno()), str(os.getpid()), main]
        devnull = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
        pid = os.posix_spawn(sys.executable, argv, dict(os.environ), file_actions=devnull, setsid=True)
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
    return pid, ours


class _Janitor(msgspec.Struct):
    """bingo's end of the janitor's control socket (see `_janitor.py` for the protocol).

    One per bingo process, started at most once, and attached to whichever event loop is
    spawning (a test suite runs many loops; bingo one). Its answers and exits are futures
    of the loop it is attached to."""

    pid: int
    sock: socket.socket
    loop: asyncio.AbstractEventLoop | None = None
    alive: bool = True
    inbox: bytes = b""
    writing: bool = False
    outgoing: deque[_Outgoing] = msgspec.field(default_factory=lambda: deque[_Outgoing]())
    answers: dict[int, asyncio.Future[tuple[int, asyncio.Future[int | None]]]] = msgspec.field(
        default_factory=dict[int, "asyncio.Future[tuple[int, asyncio.Future[int | None]]]"]
    )
    exits: dict[int, asyncio.Future[int | None]] = msgspec.field(default_factory=dict[int, "asyncio.Future[int | None]"])
    ids: itertools.count[int] = msgspec.field(default_factory=lambda: itertools.count(1))

    @classmethod
    def start(cls) -> _Janitor:
        """A new janitor (see `spawn_janitor`), its socket non-blocking, for the loop.

        Raises:
            OSError: it cannot be started.
        """
        pid, sock = spawn_janitor()
        sock.setblocking(False)
        return cls(pid=pid, sock=sock)

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Read the socket on `loop`; what was pending on a previous loop is dropped (that
        loop has ended, and its plugins with it)."""
        if self.loop is loop:
            return
        if self.loop is not None and not self.loop.is_closed():
            self.loop.remove_reader(self.sock.fileno())
            if self.writing:
                self.loop.remove_writer(self.sock.fileno())
        self.writing = False
        self.answers.clear()
        self.exits.clear()
        self.loop = loop
        loop.add_reader(self.sock.fileno(), self._readable)
        if self.outgoing:
            self._flush()

    async def spawn(
        self, path: str, argv: Sequence[str], env: dict[str, str], cwd: Path, fds: list[int]
    ) -> tuple[int, asyncio.Future[int | None]]:
        """Ask for a plugin with these pipe ends; its pid and the future of its exit code.

        Raises:
            OSError: the janitor could not start it, or did not answer within SPAWN_WAIT.
        """
        loop = asyncio.get_running_loop()
        self.attach(loop)
        request_id = next(self.ids)
        answer: asyncio.Future[tuple[int, asyncio.Future[int | None]]] = loop.create_future()
        self.answers[request_id] = answer
        outgoing = _Outgoing(_spawn_request(request_id, path, argv, env, str(cwd)), fds)
        self.outgoing.append(outgoing)
        self._flush()
        try:
            return await self._answer(request_id)
        finally:
            if not outgoing.started:
                with contextlib.suppress(ValueError):
                    self.outgoing.remove(outgoing)

    async def _answer(self, request_id: int) -> tuple[int, asyncio.Future[int | None]]:
        try:
            async with asyncio.timeout(SPAWN_WAIT):
                return await self.answers[request_id]
        except TimeoutError:
            raise OSError(f"the janitor did not start it within {SPAWN_WAIT:g} s") from None
        finally:
            self.answers.pop(request_id, None)

    def _flush(self) -> None:
        """Write what is queued, in order; wait for the socket to take more when it is full."""
        while self.outgoing:
            head = self.outgoing[0]
            fds = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", head.fds))] if head.fds and not head.started else []
            try:
                sent = self.sock.sendmsg([head.data], fds)
            except (BlockingIOError, InterruptedError):
                if not self.writing and self.loop is not None:
                    self.loop.add_writer(self.sock.fileno(), self._flush)
                    self.writing = True
                return
            except OSError:
                self._lost()
                return
            head.started = True
            head.data = head.data[sent:]
            if not head.data:
                self.outgoing.popleft()
        if self.writing and self.loop is not None:
            self.loop.remove_writer(self.sock.fileno())
            self.writing = False

    def _readable(self) -> None:
        try:
            data = self.sock.recv(1 << 16)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._lost()
            return
        self.inbox += data
        while len(self.inbox) >= 4:
            size = int.from_bytes(self.inbox[:4], "big")
            if len(self.inbox) < 4 + size:
                return
            message: object = marshal.loads(self.inbox[4 : 4 + size])
            self.inbox = self.inbox[4 + size :]
            self._dispatch(message)

    def _dispatch(self, message: object) -> None:
        match message:
            case ("spawned", int(request_id), int(pid)):
                assert self.loop is not None
                exit_code: asyncio.Future[int | None] = self.loop.create_future()
                self.exits[pid] = exit_code
                answer = self.answers.get(request_id)
                if answer is None or answer.done():
                    _kill(pid)  # its caller gave up waiting: nobody will talk to it
                else:
                    answer.set_result((pid, exit_code))
            case ("failed", int(request_id), int(errno), str(text)):
                answer = self.answers.pop(request_id, None)
                if answer is not None and not answer.done():
                    answer.set_exception(OSError(errno, text))
            case ("exit", int(pid), int(status)):
                waiting = self.exits.pop(pid, None)
                if waiting is not None and not waiting.done():
                    waiting.set_result(os.waitstatus_to_exitcode(status))
            case _:
                _log.warning("the janitor said something unexpected: %r", message)

    def _lost(self) -> None:
        """The janitor is gone (it should never be while bingo runs): fail what waits on it,
        and let the next spawn start another."""
        global _current
        if not self.alive:
            return
        self.alive = False
        _log.warning("the plugin janitor (pid %d) ended", self.pid)
        if self.loop is not None and not self.loop.is_closed():
            self.loop.remove_reader(self.sock.fileno())
            if self.writing:
                self.loop.remove_writer(self.sock.fileno())
        self.sock.close()
        for answer in self.answers.values():
            if not answer.done():
                answer.set_exception(OSError("the plugin janitor ended"))
        for ended in self.exits.values():
            if not ended.done():
                ended.set_result(None)
        self.answers.clear()
        self.exits.clear()
        self.outgoing.clear()  # the fds they carry are their spawners' to close
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, os.WNOHANG)
        if _current is self:
            _current = None


_current: _Janitor | None = None


def start_janitor() -> None:
    """Start the run's janitor now, if it is not running (Linux; idempotent, cheap, no loop
    needed). The first spawn does it anyway; calling this as soon as plugins are known to be
    needed takes the janitor's interpreter start off the first plugin's path.

    Raises:
        OSError: it cannot be started.
    """
    global _current
    if USE_JANITOR and (_current is None or not _current.alive):
        _current = _Janitor.start()


def _the_janitor() -> _Janitor:
    start_janitor()
    assert _current is not None
    return _current


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


class _PipeWriter(FlowControlMixin):
    """The protocol under the stdin StreamWriter: flow control (drain), nothing read."""


async def _streams(
    stdin_w: int, stdout_r: int, stderr_r: int
) -> tuple[asyncio.StreamWriter, asyncio.StreamReader, asyncio.StreamReader]:
    """asyncio streams over bingo's ends of the three pipes (each closed by its transport,
    or here when a transport could not be made)."""
    loop = asyncio.get_running_loop()
    pipes = [os.fdopen(fd, "wb" if fd == stdin_w else "rb", buffering=0) for fd in (stdin_w, stdout_r, stderr_r)]
    taken = 0
    try:
        transport, protocol = await loop.connect_write_pipe(_PipeWriter, pipes[0])
        taken = 1
        stdin = asyncio.StreamWriter(transport, protocol, None, loop)
        stdout = asyncio.StreamReader(limit=MAX_LINE, loop=loop)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdout, loop=loop), pipes[1])
        taken = 2
        stderr = asyncio.StreamReader(loop=loop)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stderr, loop=loop), pipes[2])
        taken = 3
    except BaseException:
        for pipe in pipes[taken:]:
            pipe.close()
        raise
    return stdin, stdout, stderr


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
        self.last_stderr = ""
        self.stderr_bytes = 0
        self.on_fault: Callable[[str, str], None] | None = None
        """Told (key, what) once for each misbehaviour only this layer sees."""
        self.deaf = False
        """Set when it is known not to read its stdin: its shutdown begins with SIGTERM, and
        its SIGTERM is no fault to report (why it was stopped was said already)."""
        self.started = time.monotonic()
        self.stdout = stdout
        self.stdin = stdin
        self._stderr = stderr
        self._wait = wait
        self._returncode = returncode
        self._stderr_task: asyncio.Task[None] | None = None

    @classmethod
    async def spawn(
        cls, argv: Sequence[str], *, env: dict[str, str], cwd: Path, log: PluginLog
    ) -> PluginProcess:
        """Start `argv` in its own session and process group.

        Raises:
            OSError: the command cannot be run.
        """
        if not USE_JANITOR:
            log.line(f"starting {' '.join(argv)}")  # inline, as below
            return await cls._spawn_directly(argv, env=env, cwd=cwd, log=log)
        path = resolve(argv, env, cwd)
        janitor = _the_janitor()
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        theirs, ours = [stdin_r, stdout_w, stderr_w], [stdin_w, stdout_r, stderr_r]
        try:
            try:
                pid, ended = await janitor.spawn(path, [path, *argv[1:]], env, cwd, theirs)
            finally:
                for fd in theirs:  # the janitor has its own copies once it has answered
                    os.close(fd)
        except BaseException:
            for fd in ours:
                os.close(fd)
            raise
        try:
            # Before its stderr is read, so the plugin's own lines follow this one. Inline, not
            # through a thread: one short append, and a hop costs far more (ADR-0003).
            log.line(f"starting {' '.join(argv)}")
            stdin, stdout, stderr = await _streams(stdin_w, stdout_r, stderr_r)
        except BaseException:
            _kill(pid)
            raise

        def returncode() -> int | None:
            return ended.result() if ended.done() else None

        return cls(
            pid=pid,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            wait=lambda: asyncio.shield(ended),
            returncode=returncode,
            log=log,
        )

    @classmethod
    async def _spawn_directly(
        cls, argv: Sequence[str], *, env: dict[str, str], cwd: Path, log: PluginLog
    ) -> PluginProcess:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            cwd=cwd,
            limit=MAX_LINE,
            start_new_session=True,
        )
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        return cls(
            pid=proc.pid,
            stdin=proc.stdin,
            stdout=proc.stdout,
            stderr=proc.stderr,
            wait=proc.wait,
            returncode=lambda: proc.returncode,
            log=log,
        )

    @property
    def returncode(self) -> int | None:
        return self._returncode()

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
                self._fault("stderr-flood", f"wrote more than {LOG_MAX_BYTES // 1024 // 1024} MiB to stderr; its log keeps only the latest")
            lines = (partial + chunk).split(b"\n")
            partial = lines.pop()[-4096:]
            for line in reversed(lines):
                text = line.decode("utf-8", "replace").strip()
                if text:
                    self.last_stderr = text[:_LAST_LINE_MAX]
                    break
        if partial.strip():
            self.last_stderr = partial.decode("utf-8", "replace").strip()[:_LAST_LINE_MAX]

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
                while self._signal_group(0) and _group_has_living(self.pid):
                    await asyncio.sleep(_GROUP_POLL)
                return True
        return False

    async def shutdown(self) -> None:
        """Close stdin, wait (not when `deaf`); SIGTERM the group, wait; SIGKILL the group.
        Bounded by EXIT_GRACE + TERM_GRACE + KILL_WAIT; if cancelled midway, the group is
        SIGKILLed at once before the cancellation goes on."""
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
                    self._fault("ignores-stop", f"did not exit {closing}on SIGTERM; it was killed")
                elif not self.deaf:
                    self._fault("ignores-stop", f"did not exit within {EXIT_GRACE:g} s of its stdin closing; it was stopped with SIGTERM")
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
