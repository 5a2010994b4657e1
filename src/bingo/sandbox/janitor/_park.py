"""Processes confined ahead: the next command's process, forked and confined by the janitor
before the command is known, and handed to bingo (ADR-0030).

Owns `park` (in the janitor, once a confined process without a warden has ended and nothing
waits: fork the next one like it, wait for it to say it is confined, and hand bingo its order
socket) and the parked child's life (`_parked`: confined, it waits for its order, bounds its
TCP to the proxy's port, and runs the command as a plugin's is run). bingo sends the order
itself; the janitor reports the exit as a warden's (`_server.py`).

Imported by the janitor at its first park, which follows a confined spawn: never in an
unconfined run, and never at the janitor's start (ADR-0013).
"""

from __future__ import annotations

import _socket
import marshal
import os
import select
import sys

from . import _landlock
from ._codec import Message, encode
from ._confine import enter, remove_tree
from ._sandbox import key, missing_commondirs
from ._server import ENDINGS, FDS, RELEASED, Spawn, die_with, exec_plugin

TYPE_CHECKING = False  # not typing's: the janitor imports nothing it can do without
if TYPE_CHECKING:
    import signal as _signal  # the same functions, typed (`_signal` has no stubs)
    from typing import Any

    from ._server import JanitorServer
else:
    import _signal

__all__ = ["park"]

_PARK_WAIT = 5.0
"""Seconds a process parked ahead has to say it is confined."""


def park(self: JanitorServer, spawn: Spawn) -> None:
    """Fork and confine, now that nothing waits, the process the next spawn like `spawn`
    (no warden, the same policy) will run in, and hand bingo its order socket
    (`("parked", pid, tmpdir, denied, writable, protected, netns, paths, mtimes)`, the
    socket attached; `paths` and `mtimes`: the walked directories, for bingo to see that
    its rules still hold). bingo sends it the order itself; the janitor reports its exit
    as a warden's, then parks the next. Nothing is handed over when it could not be
    confined (the next spawn, made the usual way, says why)."""
    wanted = key(spawn.confine)
    if wanted in self.parked.values():
        return
    try:
        tmpdir, plan, rules = self.sandbox.plan_ahead(spawn.confine)
    except OSError:
        return
    ours, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_SEQPACKET)
    ready_r, ready_w = os.pipe()
    janitor = os.getpid()
    previous = _signal.pthread_sigmask(_signal.SIG_BLOCK, ENDINGS)
    try:
        pid = os.fork()
    except OSError:
        pid = -1
    if pid == 0:
        ours.close()
        os.close(ready_r)
        _parked(plan, theirs.detach(), ready_w, janitor, [self.control.fileno(), self.wake_r, self.wake_w, *self.fds])
    _signal.pthread_sigmask(_signal.SIG_SETMASK, previous)
    theirs.close()
    os.close(ready_w)
    os.close(plan.ruleset)
    try:
        # poll, not select: the walk's fds push new ones past select's 1024.
        waiting = select.poll()
        waiting.register(ready_r, select.POLLIN)
        ready = pid > 0 and bool(waiting.poll(_PARK_WAIT * 1000)) and os.read(ready_r, 1) == b"r"
    except OSError:
        ready = False
    os.close(ready_r)
    if not ready:
        ours.close()
        if pid > 0:
            try:
                os.kill(pid, _signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
        remove_tree(tmpdir)
        return
    self.wardens.add(pid)
    self.tmpdirs[pid] = tmpdir
    self.confined[pid] = spawn
    self.swept[pid] = missing_commondirs(spawn.confine)
    self.parked[pid] = wanted
    confine = spawn.confine
    assert confine is not None
    walked = [each for rule in rules for each in rule.walked]
    message: Message = (
        "parked",
        pid,
        tmpdir,
        confine.denied,
        confine.writable,
        confine.protected,
        int(confine.netns),
        [path for path, _mtime in walked],
        [mtime for _path, mtime in walked],
    )
    data = encode(message)
    try:
        attached = ours.fileno().to_bytes(4, sys.byteorder)
        sent = self.control.sendmsg([data], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, attached)])
        if sent < len(data):
            self.control.sendall(data[sent:])
    except OSError:
        self.ending = True
    ours.close()


def _parked(plan: Any, orders: int, ready: int, janitor: int, theirs: list[int]) -> None:
    """In a child forked ahead of its spawn: a session of its own, confined (`plan`), then
    wait for the order (`marshal`led path, argv, env, cwd, cpus and the proxy's port, with
    the three fds), bound its TCP to that port and run it. Never returns; without an order
    (bingo let go of it) it exits `RELEASED`."""
    try:
        _signal.set_wakeup_fd(-1)
        for fd in theirs:
            os.close(fd)
        os.setsid()
        die_with(janitor)
        enter(plan, janitor)
        os.write(ready, b"r")
        os.close(ready)
        sock = _socket.socket(fileno=orders)
        data, ancillary, _flags, _address = sock.recvmsg(1 << 20, _socket.CMSG_SPACE(FDS * 4))
        fds: list[int] = []
        for level, kind, payload in ancillary:
            if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
                fds.extend(memoryview(payload)[: len(payload) - len(payload) % 4].cast("i"))
        if not data or len(fds) != FDS:
            os._exit(RELEASED)
        path, argv, env, cwd, cpus, port = marshal.loads(data)
        try:
            _landlock.restrict_tcp(plan.abi, port)
        except OSError as exc:
            os.write(fds[2], ("cannot run %s: its network could not be bounded: %s\n" % (path, exc.strerror)).encode())
            os._exit(127)
        exec_plugin(Spawn(0, path, argv, env, cwd, 0.0, cpus), fds, janitor)
    except BaseException:
        pass
    os._exit(127)
