"""bingo's end of the janitor: starting it, asking it for a plugin, hearing how each ended.

Owns the run's one janitor process (started lazily with the first spawn, by posix_spawn: no
fork of bingo, no preexec_fn; ADR-0013), bingo's end of its control socket, the three pipes
of each plugin it starts (bingo makes them and passes their far ends by SCM_RIGHTS, so the
streams are bingo's own from the start), and the futures of each plugin's exit. What the
janitor does with a request is `_server.py`'s; the bytes of a message are `_codec.py`'s;
what a spawn gives back is `_spawned.py`'s, and the processes confined ahead it holds
`_parked.py`'s.

It does not make asyncio streams of the pipes, write a plugin's log or shut a plugin down:
that is `bridge/process.py`'s PluginProcess.

It runs just past ~480 lines because bingo's end of one socket protocol (start, requests,
answers, exits, the end at bingo's exit) reads best whole; what a spawn gives back and the
processes parked ahead are already apart.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import itertools
import logging
import os
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path

import msgspec

from .._policy import Policy
from ._codec import Decoder, Field, Message, encode
from ._parked import Parked, keep, read_parked, send_order
from ._parked import policy_key as _key
from ._spawned import Spawned, kill_warden, pipes
from ._syscall import USE_JANITOR

__all__ = [
    "SPAWN_WAIT",
    "USE_JANITOR",
    "JanitorClient",
    "Spawned",
    "kill_warden",
    "spawn_janitor",
    "wind_down",
]

_log = logging.getLogger(__name__)

SPAWN_WAIT = 10.0
"""Seconds the janitor has to say it started a plugin (the first spawn includes the
janitor's own start, which a loaded machine makes slow)."""


_ON_PATH = f"import sys; sys.path.append({os.path.dirname(os.path.dirname(os.path.abspath(__file__)))!r}); "
"""What makes this package importable as `janitor` in the janitor's interpreter: its parent
directory, put last on the path (after the standard library, which is all the server imports
besides its own package)."""
_SERVER = _ON_PATH + "from janitor import _server; _server.main(sys.argv[1:])"
"""How the janitor is started (`python -I -S -c _SERVER FD PID MAIN`): imported, so that its
bytecode is the cached one; run as a script, it would compile its source at every start, as
long again as the rest of that start."""


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


class _Outgoing(msgspec.Struct):
    """A frame waiting to be written to the janitor, with the fds its first byte carries."""

    data: bytes
    fds: list[int]
    started: bool = False


class JanitorClient:
    """bingo's end of the janitor's control socket (see `_server.py` for the protocol).

    One per bingo process, started at most once, and attached to whichever event loop is
    spawning (a test suite runs many loops; bingo one). Its answers and exits are futures
    of the loop it is attached to."""

    __slots__ = (
        "alive",
        "answers",
        "decoder",
        "exits",
        "ids",
        "loop",
        "netns",
        "outgoing",
        "parked",
        "pid",
        "received",
        "sock",
        "writing",
    )

    def __init__(self, *, pid: int, sock: socket.socket) -> None:
        self.pid = pid
        self.sock = sock
        self.loop: asyncio.AbstractEventLoop | None = None
        self.alive = True
        self.decoder = Decoder()
        self.writing = False
        self.outgoing = deque[_Outgoing]()
        self.answers: dict[int, asyncio.Future[tuple[int, asyncio.Future[int | None]]]] = {}
        self.exits: dict[int, asyncio.Future[int | None]] = {}
        self.ids = itertools.count(1)
        self.netns = False
        """Whether bingo holds the listener of this janitor's network namespace (confined
        spawns join it)."""
        self.parked: dict[tuple[object, ...], Parked] = {}
        """Per policy, the process the janitor forked and confined ahead, waiting for an order
        (the `bash` tool's next command): bingo sends it straight, no janitor on the path."""
        self.received = deque[int]()
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
        theirs, (stdin_w, stdout_r, stderr_r) = pipes(merged)
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
        parked: Parked,
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
            theirs, (stdin_w, stdout_r, stderr_r) = pipes(merged)
            ours = [fd for fd in (stdin_w, stdout_r, stderr_r) if fd >= 0]
            port = policy.proxy[1] if policy.proxy is not None else -1
            if not send_order(sock, parked, path, argv, env, cwd, port, theirs):
                for fd in ours:
                    os.close(fd)
                return None
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
                    keep(
                        self.parked, *read_parked(pid, fd, tmpdir, paths, mtimes, (denied, writable, protected, netns))
                    )
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

WIND_DOWN_WAIT = 5.0
"""Seconds bingo's exit waits for its janitor to end: time for it to end what it still holds
(every plugin was shut down before, so it usually takes a few milliseconds; after an
interrupt, a plugin's grace). Past it the janitor goes on alone, bounded by its own limits."""


def wind_down(wait: float = WIND_DOWN_WAIT) -> None:
    """At bingo's exit: close the janitor's socket (its EOF is bingo's end) and wait, at most
    `wait` seconds, for it to end, so that nothing it does (ending the processes it confined
    ahead, sweeping, removing their TMPDIRs) happens after bingo has exited and a script
    that removes the project next finds it still being written. Nothing if none was started."""
    global _current
    client, _current = _current, None
    if client is None:
        return
    client.sock.close()
    until = time.monotonic() + wait
    while True:
        try:
            pid, _status = os.waitpid(client.pid, os.WNOHANG)
        except ChildProcessError:
            return  # reaped already
        if pid != 0 or time.monotonic() >= until:
            return
        time.sleep(0.002)


"""The run's janitor, once started (None again once it is lost)."""
