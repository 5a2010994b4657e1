"""bingo's end of the janitor: starting it, asking it for a plugin, hearing how each ended.

Owns the run's one janitor process (started lazily with the first spawn, by posix_spawn: no
fork of bingo, no preexec_fn; ADR-0013), bingo's end of its control socket, the three pipes
of each plugin it starts (bingo makes them and passes their far ends by SCM_RIGHTS, so the
streams are bingo's own from the start), and the futures of each plugin's exit. What the
janitor does with a request is `_server.py`'s; the bytes of a message are `_codec.py`'s.

It does not make asyncio streams of the pipes, write a plugin's log or shut a plugin down:
that is `bridge/process.py`'s PluginProcess.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import itertools
import logging
import marshal
import os
import signal
import socket
import sys
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard, TypeVar

import msgspec

from .._policy import Policy
from ._codec import Decoder, Field, Message, encode

__all__ = [
    "SPAWN_WAIT",
    "USE_JANITOR",
    "JanitorClient",
    "Spawned",
    "kill_warden",
    "spawn_janitor",
]

_log = logging.getLogger(__name__)

SPAWN_WAIT = 10.0
"""Seconds the janitor has to say it started a plugin (the first spawn includes the
janitor's own start, which a loaded machine makes slow)."""

USE_JANITOR = sys.platform.startswith("linux") and hasattr(os, "posix_spawn")
"""Whether the janitor runs here (Linux): where it does not, a plugin is spawned directly."""

_ON_PATH = f"import sys; sys.path.append({os.path.dirname(os.path.dirname(os.path.abspath(__file__)))!r}); "
"""What makes this package importable as `janitor` in the janitor's interpreter: its parent
directory, put last on the path (after the standard library, which is all the server imports
besides its own package)."""
_SERVER = _ON_PATH + "from janitor import _server; _server.main(sys.argv[1:])"
"""How the janitor is started (`python -I -S -c _SERVER FD PID MAIN`): imported, so that its
bytecode is the cached one; run as a script, it would compile its source at every start, as
long again as the rest of that start."""


@dataclass(slots=True, frozen=True)
class Spawned:
    """A plugin the janitor started: its warden's pid, bingo's ends of its three pipes (each
    the caller's to close), and the future of how it ended (None: the janitor was lost)."""

    pid: int
    """The warden's pid, which is also the plugin's process group."""
    stdin: int
    stdout: int
    stderr: int
    ended: asyncio.Future[int | None]


def _pipes(merged: bool) -> tuple[list[int], tuple[int, int, int]]:
    """The far ends (stdin, stdout, stderr) a process is given, and ours (stdin's writer,
    stdout's and stderr's readers; -1 where there is none): merged, stdin is /dev/null and
    stderr is stdout's pipe."""
    if merged:
        stdin_r, stdin_w = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC), -1
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = -1, stdout_w
    else:
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
    return [stdin_r, stdout_w, stderr_w], (stdin_w, stdout_r, stderr_r)


def kill_warden(warden: int) -> None:
    """SIGKILL a plugin's group and its warden (which may not lead a group yet: then the
    plugin dies with it, by its parent-death signal, and the janitor sweeps the rest)."""
    with contextlib.suppress(OSError):
        os.killpg(warden, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.kill(warden, signal.SIGKILL)


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
        argv = [sys.executable, "-I", "-S", "-c", _SERVER, str(theirs.fileno()), str(os.getpid()), main]
        devnull = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
        pid = os.posix_spawn(sys.executable, argv, dict(os.environ), file_actions=devnull, setsid=True)
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
    return pid, ours


_PARKED_MAX = 4
"""Processes confined ahead that bingo keeps at most (one per policy: the `bash` tool's, a
subagent's); the janitor does not replace one let go."""


@dataclass(slots=True)
class _Parked:
    """A process confined ahead, as the janitor handed it over: its pid, the socket it waits
    on for its order, its TMPDIR, and the directories its rules were walked from and its
    protected paths (with their mtimes, -1 for one missing): if one changed, its rules are
    out of date and it is let go."""

    pid: int
    sock: int
    tmpdir: str
    walked: list[tuple[str, int]]

    def fresh(self) -> bool:
        for path, mtime in self.walked:
            try:
                now = os.stat(path).st_mtime_ns
            except OSError:
                now = -1  # -1 recorded: a protected path that was missing, and must still be
            if now != mtime:
                return False
        return True


_T = TypeVar("_T")


def _is_list(value: object) -> TypeGuard[list[object]]:
    return isinstance(value, list)


def _items(value: object, kind: type[_T]) -> tuple[_T, ...]:
    """The items of `value` (a list, as `marshal` made it) that are `kind`s."""
    if not _is_list(value):
        return ()
    return tuple(item for item in value if isinstance(item, kind))


def _key(policy: Policy, netns: bool) -> tuple[object, ...]:
    """What a process parked ahead is parked for (the janitor's `_sandbox.key`)."""
    return (
        tuple(str(p) for p in policy.denied),
        tuple(str(p) for p in policy.writable),
        tuple(str(p) for p in policy.protected),
        netns,
    )


class _Outgoing(msgspec.Struct):
    """A frame waiting to be written to the janitor, with the fds its first byte carries."""

    data: bytes
    fds: list[int]
    started: bool = False


class JanitorClient(msgspec.Struct):
    """bingo's end of the janitor's control socket (see `_server.py` for the protocol).

    One per bingo process, started at most once, and attached to whichever event loop is
    spawning (a test suite runs many loops; bingo one). Its answers and exits are futures
    of the loop it is attached to."""

    pid: int
    sock: socket.socket
    loop: asyncio.AbstractEventLoop | None = None
    alive: bool = True
    decoder: Decoder = msgspec.field(default_factory=Decoder)
    writing: bool = False
    outgoing: deque[_Outgoing] = msgspec.field(default_factory=lambda: deque[_Outgoing]())
    answers: dict[int, asyncio.Future[tuple[int, asyncio.Future[int | None]]]] = msgspec.field(
        default_factory=dict[int, "asyncio.Future[tuple[int, asyncio.Future[int | None]]]"]
    )
    exits: dict[int, asyncio.Future[int | None]] = msgspec.field(
        default_factory=dict[int, "asyncio.Future[int | None]"]
    )
    ids: itertools.count[int] = msgspec.field(default_factory=lambda: itertools.count(1))
    netns: bool = False
    """Whether bingo holds the listener of this janitor's network namespace (confined
    spawns join it)."""
    parked: dict[tuple[object, ...], _Parked] = msgspec.field(default_factory=dict[tuple[object, ...], "_Parked"])
    """Per policy, the process the janitor forked and confined ahead, waiting for an order
    (the `bash` tool's next command): bingo sends it straight, no janitor on the path."""
    received: deque[int] = msgspec.field(default_factory=lambda: deque[int]())
    """Fds the janitor sent (a network namespace's listener), in the order they came."""

    @classmethod
    def start(cls) -> JanitorClient:
        """A new janitor (see `spawn_janitor`), its socket non-blocking, for the loop.

        Raises:
            OSError: it cannot be started.
        """
        pid, sock = spawn_janitor()
        sock.setblocking(False)
        return cls(pid=pid, sock=sock)

    @classmethod
    def running(cls) -> JanitorClient:
        """The run's janitor, started now if it is not running.

        Raises:
            OSError: it cannot be started.
        """
        global _current
        if _current is None or not _current.alive:
            _current = cls.start()
        return _current

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
        self,
        path: str,
        argv: Sequence[str],
        env: dict[str, str],
        cwd: Path,
        *,
        grace: float,
        policy: Policy | None = None,
        netns: bool = False,
        merged: bool = False,
        warden: bool = True,
    ) -> Spawned:
        """Ask for a plugin (`path` run as `argv`), given new pipes; its warden gives it
        `grace` seconds between SIGTERM and SIGKILL. With a `policy` it runs confined
        (ADR-0030), in the run's network namespace when `netns`; `merged`: its stdin is
        /dev/null and its stderr goes to its stdout's pipe (`Spawned.stdin` and `.stderr`
        are then -1). `warden` False: no warden between the janitor and the process, which
        leads a session of its own (its pid is its group's) and whose group the caller ends
        (the `bash` tool's: a fork fewer on its path).

        Raises:
            OSError: the janitor could not start it (nor confine it as asked), or did not
                answer within SPAWN_WAIT.
        """
        if policy is not None and not warden:
            parked = self.parked.pop(_key(policy, netns), None)
            if parked is not None:
                started = self._start_parked(parked, path, argv, env, cwd, policy, merged)
                if started is not None:
                    return started
        theirs, (stdin_w, stdout_r, stderr_r) = _pipes(merged)
        ours = [fd for fd in (stdin_w, stdout_r, stderr_r) if fd >= 0]
        confine: tuple[list[str], list[str], list[str], int, int] | None = None
        if policy is not None:
            confine = (
                [str(path) for path in policy.denied],
                [str(path) for path in policy.writable],
                [str(path) for path in policy.protected],
                policy.proxy[1] if policy.proxy is not None else -1,
                int(netns),
            )
        try:
            try:
                pid, ended = await self._request(path, argv, env, cwd, grace, theirs, confine, 0 if warden else 1)
            finally:
                for fd in set(theirs):  # the janitor has its own copies once it has answered
                    os.close(fd)
        except BaseException:
            for fd in ours:
                os.close(fd)
            raise
        return Spawned(pid=pid, stdin=stdin_w, stdout=stdout_r, stderr=stderr_r, ended=ended)

    def _start_parked(
        self,
        parked: _Parked,
        path: str,
        argv: Sequence[str],
        env: dict[str, str],
        cwd: Path,
        policy: Policy,
        merged: bool,
    ) -> Spawned | None:
        """Send `parked` its order (and the far ends of new pipes); None when it cannot take
        it (its rules are out of date, or it is gone): it is let go, and the janitor parks
        another once it has ended."""
        sock = socket.socket(fileno=parked.sock)
        try:
            if not parked.fresh():
                return None
            loop = asyncio.get_running_loop()
            self.attach(loop)
            theirs, (stdin_w, stdout_r, stderr_r) = _pipes(merged)
            ours = [fd for fd in (stdin_w, stdout_r, stderr_r) if fd >= 0]
            port = policy.proxy[1] if policy.proxy is not None else -1
            order = marshal.dumps(
                (path, list(argv), {**env, "TMPDIR": parked.tmpdir}, str(cwd), sorted(os.sched_getaffinity(0)), port)
            )
            try:
                sock.sendmsg([order], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", theirs))])
            except OSError:
                for fd in ours:
                    os.close(fd)
                return None
            finally:
                for fd in set(theirs):
                    os.close(fd)
            ended: asyncio.Future[int | None] = loop.create_future()
            self.exits[parked.pid] = ended
            return Spawned(pid=parked.pid, stdin=stdin_w, stdout=stdout_r, stderr=stderr_r, ended=ended)
        finally:
            sock.close()

    async def network(self, *, another: bool = False) -> tuple[socket.socket, int] | str:
        """The TCP listener on 127.0.0.1 inside the run's network namespace (made by the
        janitor on first asking) and its port, or (`another`) one more listener made in it;
        or why there is none, in words."""
        loop = asyncio.get_running_loop()
        self.attach(loop)
        request_id = next(self.ids)
        answer: asyncio.Future[tuple[int, asyncio.Future[int | None]]] = loop.create_future()
        self.answers[request_id] = answer
        self.outgoing.append(_Outgoing(encode(("listener" if another else "network", request_id)), []))
        self._flush()
        try:
            fd, _unused = await self._answer(request_id)
        except OSError as exc:
            return exc.strerror or str(exc)
        listener = socket.socket(fileno=fd)
        return listener, listener.getsockname()[1]

    async def _request(
        self,
        path: str,
        argv: Sequence[str],
        env: dict[str, str],
        cwd: Path,
        grace: float,
        fds: list[int],
        confine: tuple[list[str], list[str], list[str], int, int] | None = None,
        flags: int = 0,
    ) -> tuple[int, asyncio.Future[int | None]]:
        loop = asyncio.get_running_loop()
        self.attach(loop)
        request_id = next(self.ids)
        answer: asyncio.Future[tuple[int, asyncio.Future[int | None]]] = loop.create_future()
        self.answers[request_id] = answer
        # The plugin runs on the CPUs bingo runs on now (the janitor's own may be older).
        cpus = sorted(os.sched_getaffinity(0))
        extra: tuple[Field, ...] = (flags, *confine) if confine is not None else (flags,) if flags else ()
        message: Message = ("spawn", request_id, path, list(argv), dict(env), str(cwd), grace, cpus, *extra)
        outgoing = _Outgoing(encode(message), fds)
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
            fds = (
                [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", head.fds))]
                if head.fds and not head.started
                else []
            )
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
            data, ancillary, _flags, _address = self.sock.recvmsg(1 << 16, socket.CMSG_SPACE(4 * 4))
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data, ancillary = b"", []
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                self.received.extend(array.array("i", payload[: len(payload) - len(payload) % 4]))
        if not data:
            self._lost()
            return
        for message in self.decoder.feed(data):
            self._dispatch(message)

    def _dispatch(self, message: object) -> None:
        match message:
            case ("spawned", int(request_id), int(pid)):
                assert self.loop is not None
                exit_code: asyncio.Future[int | None] = self.loop.create_future()
                self.exits[pid] = exit_code
                answer = self.answers.get(request_id)
                if answer is None or answer.done():
                    kill_warden(pid)  # its caller gave up waiting: nobody will talk to it
                else:
                    answer.set_result((pid, exit_code))
            case ("failed", int(request_id), int(errno), str(text)):
                answer = self.answers.pop(request_id, None)
                if answer is not None and not answer.done():
                    answer.set_exception(OSError(errno, text))
            case ("network", int(request_id), int(_port)):
                fd = self.received.popleft() if self.received else -1
                answer = self.answers.pop(request_id, None)
                if fd < 0:
                    if answer is not None and not answer.done():
                        answer.set_exception(OSError(0, "the janitor's listener did not arrive"))
                elif answer is None or answer.done():
                    os.close(fd)
                else:
                    assert self.loop is not None
                    answer.set_result((fd, self.loop.create_future()))
            case ("nonetwork", int(request_id), str(reason)):
                answer = self.answers.pop(request_id, None)
                if answer is not None and not answer.done():
                    answer.set_exception(OSError(0, reason))
            case (
                "parked",
                int(pid),
                str(tmpdir),
                object() as denied,
                object() as writable,
                object() as protected,
                int(netns),
                object() as paths,
                object() as mtimes,
            ):
                fd = self.received.popleft() if self.received else -1
                if fd >= 0:
                    key: tuple[object, ...] = (
                        _items(denied, str),
                        _items(writable, str),
                        _items(protected, str),
                        bool(netns),
                    )
                    previous = self.parked.pop(key, None)
                    if previous is not None:
                        os.close(previous.sock)
                    walked = list(zip(_items(paths, str), _items(mtimes, int), strict=False))
                    self.parked[key] = _Parked(pid, fd, tmpdir, walked)
                    while len(self.parked) > _PARKED_MAX:  # the oldest policy's goes
                        os.close(self.parked.pop(next(iter(self.parked))).sock)
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
        for parked in self.parked.values():
            os.close(parked.sock)
        self.parked.clear()
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, os.WNOHANG)
        if _current is self:
            _current = None


_current: JanitorClient | None = None
"""The run's janitor, once started (None again once it is lost)."""
