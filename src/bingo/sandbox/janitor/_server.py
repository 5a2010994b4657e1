"""The janitor: one small process per bingo run, the parent of every plugin process, so that
nothing a plugin starts outlives the plugin, or outlives bingo.

Started by `_client.spawn_janitor` as `python -I -S -c "…from janitor import _server;
_server.main(sys.argv[1:])" FD BINGO_PID MAIN` (its cached bytecode, never bingo's modules:
this package is imported from its parent directory, put last on the path), FD being its end
of a unix stream socket to bingo (the control socket), MAIN `1` when bingo's main thread
spawned it (the parent-death signal follows that thread). bingo starts it once, lazily, with the
first plugin spawn, and asks it, over the socket, to start each plugin with the three pipe
ends bingo made (passed by SCM_RIGHTS). It imports only what is built in or cheap (`os`,
`_signal`, `_socket`, `select`, `marshal`, `_ctypes`; not `signal`, `socket` or `json`, whose
enums and regexes would double its start) and, of this package, only `_codec`, `_prctl` and
`proc`, which import nothing else, so it is up in about the time of `python -S`.

For every plugin it forks a *warden* (a fork of itself, no new interpreter), which:
  - starts a session of its own (it leads the plugin's process group, whose id is the pid
    bingo is told), dies with the janitor (PR_SET_PDEATHSIG) and makes itself a *child
    subreaper* (PR_SET_CHILD_SUBREAPER), then forks the plugin, which dies with its warden,
    takes the three pipes as 0, 1 and 2, runs on the CPUs bingo runs on now, and execs the
    command; the warden lets go of the pipes, so bingo sees EOF when the plugin (and
    whatever it started) does;
  - when the plugin exits: kills and reaps every descendant left (orphans, even those in a
    session of their own, are re-parented to the subreaper), and exits the way the plugin
    did (the same code, or the same signal), which the janitor reports to bingo;
  - on SIGTERM (bingo's shutdown signals the group; the janitor's own end): sends the
    plugin SIGTERM, gives it GRACE seconds, SIGKILLs it, and kills every descendant as above.

Why: PR_SET_PDEATHSIG is not inherited across fork and a process group does not hold a child
that calls setsid(), but a subreaper holds every orphan below it. The janitor is a subreaper
too: a warden SIGKILLed before it could sweep (bingo's last resort on a group) leaves its
orphans to the janitor, which kills them.

bingo's death (EOF on the control socket, or SIGTERM from the janitor's own parent-death
signal, set here and checked against BINGO_PID for the race) ends everything: every warden
is sent SIGTERM and given GRACE and its sweep, then every group left is SIGKILLed, every
descendant killed, and the janitor exits.

The control protocol, framed by `_codec` both ways: bingo → janitor: `("spawn", id, path,
argv, env, cwd, grace, cpus[, flags[, denied, writable, protected, port, netns]])`, the three
fds (stdin's read end, stdout's and stderr's write ends) attached to its first byte; `flags`
bit 0: no warden (the command is forked straight from the janitor in a session of its own:
the `bash` tool's); the five fields after it: the `Policy` to confine it by (ADR-0030:
`_sandbox.py` prepares it here, `_confine.enter` applies it in the child), `netns` 1 to join
the run's network namespace; `("network", id)`: the listener of that namespace (made on first
asking). janitor → bingo: `("spawned", id, pid)`, `("failed", id, errno, text)`, `("exit",
pid, wait_status)`, `("network", id, port)` with the listener's fd attached, `("nonetwork",
id, reason)`, `("parked", pid, tmpdir, denied, writable, protected, netns, paths, mtimes)`
with the order socket of a process confined ahead (`_park.park`; bingo sends it
its command itself, and hears its exit as a warden's). It never touches the plugin's pipes otherwise, and speaks no JSON-RPC. Linux
only. It does not own bingo's end (`_client.py`).

Whole at about 600 lines on purpose: the janitor's start is on the first spawn's path, and
each module it imports there is a cost (ADR-0013 measured it), so the janitor, its wardens and
the spawn message they share are one module, beside `_codec`, `_prctl` and `proc` (a test pins
that list). What only a confined spawn needs is imported when the first one comes:
`_sandbox.py` (the plans, the rules kept, the git commondirs planted), `_park.py` (processes
confined ahead) and the kernel's confinement (`_confine.py` and its parts).
"""

from __future__ import annotations

import _socket
import os
import select
import sys
import time

from . import proc
from ._codec import Decoder, Message, encode
from ._prctl import PR_SET_CHILD_SUBREAPER, PR_SET_PDEATHSIG, prctl_set

TYPE_CHECKING = False  # not typing's: the janitor imports nothing it can do without
if TYPE_CHECKING:
    import signal as _signal  # the same functions, typed (`_signal` has no stubs)
    from typing import Any, TypeGuard
else:
    import _signal  # `signal` would build its enums at every start

__all__ = ["JanitorServer", "main"]

_POLL = 0.01
"""Seconds between checks while waiting out a grace, or for orphans to arrive."""
_SWEEP_LIMIT = 2.0
"""Seconds a sweep of descendants may take: SIGKILL is not refused, so this is ample."""
FDS = 3
"""Pipe ends passed with each spawn: the plugin's stdin, stdout and stderr."""
ENDINGS = (_signal.SIGTERM, _signal.SIGHUP, _signal.SIGINT)
_END_GRACE = 1.0
"""Seconds the janitor waits, once bingo is gone, for its wardens to end their plugins
gently and sweep (at least: the longest grace a spawn asked for), before SIGKILL."""
_NO_WARDEN = 1
"""A spawn's flag: no warden (see `Spawn.warden`)."""
RELEASED = 125
"""How a process parked ahead exits when bingo lets it go unused (EOF on its order socket).
A command that exits 125 is taken for one: the next is then not parked, only slower."""
_MAX_FD = max(os.sysconf("SC_OPEN_MAX"), 256)
"""Where closing the descriptors a plugin must not inherit stops (close_range makes it cheap)."""


# --- shared: children, reaping, sweeping ---------------------------------------------


def _alone() -> bool:
    """Whether no child is left, reaping those that ended: a subreaper with no child has no
    descendant at all (every orphan below it is re-parented to it), so there is nothing to
    look for in /proc."""
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return True
        if pid == 0:
            return False


def _sweep(keep: frozenset[int] = frozenset()) -> None:
    """Kill every descendant but `keep` (and theirs): killing a child orphans its children,
    which then arrive here, so repeat until none is left (boundedly)."""
    me = os.getpid()
    until = time.monotonic() + _SWEEP_LIMIT
    while time.monotonic() < until:
        if not keep and _alone():
            return
        found = [pid for pid in proc.children(me) if pid not in keep]
        for pid in found:
            try:
                os.kill(pid, _signal.SIGKILL)
            except ProcessLookupError:
                pass
        _reap_all(keep)
        if not found:
            return
        time.sleep(_POLL)


def _reap_all(keep: frozenset[int] = frozenset()) -> list[tuple[int, int]]:
    """Reap every exited child; the (pid, status) of those in `keep` (the rest were orphans)."""
    kept: list[tuple[int, int]] = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return kept
        if pid == 0:
            return kept
        if pid in keep:
            kept.append((pid, status))


# --- the warden: one plugin ------------------------------------------------------------


class _Confine:
    """The policy a spawn carries (bingo's `Policy`, as paths and a port)."""

    __slots__ = ("denied", "netns", "port", "protected", "writable")

    def __init__(self, denied: list[str], writable: list[str], protected: list[str], port: int, netns: bool) -> None:
        self.denied = denied
        self.writable = writable
        self.protected = protected
        self.port = port
        """The proxy's TCP port; -1: no network at all."""
        self.netns = netns
        """Whether it joins the run's network namespace (else Landlock bounds its TCP)."""


class Spawn:
    """One plugin to start, as bingo asked."""

    __slots__ = ("argv", "confine", "cpus", "cwd", "env", "grace", "path", "plan", "request_id", "tmpdir", "warden")

    def __init__(
        self,
        request_id: int,
        path: str,
        argv: list[str],
        env: dict[str, str],
        cwd: str,
        grace: float,
        cpus: list[int],
        confine: _Confine | None = None,
        warden: bool = True,
    ) -> None:
        self.request_id = request_id
        self.path = path
        self.argv = argv
        self.env = env
        self.cwd = cwd
        self.grace = grace
        self.cpus = cpus
        self.confine = confine
        self.warden = warden
        """False: the command is forked straight from the janitor, in a session of its own,
        with no warden (the `bash` tool's, whose caller ends its group itself)."""
        self.plan: Any = None
        """`_confine.Plan`, made by the janitor before the fork (None: unconfined)."""
        self.tmpdir = ""


def _is_list(value: Any) -> TypeGuard[list[Any]]:
    return isinstance(value, list)


def _is_dict(value: Any) -> TypeGuard[dict[Any, Any]]:
    return isinstance(value, dict)


def _strings(value: Any) -> list[str]:
    return [word for word in value if isinstance(word, str)] if _is_list(value) else []


def _read_spawn(message: Any) -> Spawn | None:
    """A `spawn` message (unchecked, as `marshal` made it), checked, or None."""
    match message:
        case ("spawn", int(request_id), str(path), argv, env, str(cwd), float(grace), cpus, *confined) if (
            _is_list(argv) and _is_dict(env) and _is_list(cpus)
        ):
            pairs = {key: value for key, value in env.items() if isinstance(key, str) and isinstance(value, str)}
            numbers = [cpu for cpu in cpus if isinstance(cpu, int)]
            confine = None
            flags = 0
            match confined:
                case [int(flags), denied, writable, protected, int(port), int(netns)]:
                    confine = _Confine(_strings(denied), _strings(writable), _strings(protected), port, bool(netns))
                case [int(flags)]:
                    pass
                case _:
                    pass
            return Spawn(request_id, path, _strings(argv), pairs, cwd, grace, numbers, confine, not flags & _NO_WARDEN)
        case _:
            return None


def die_with(parent: int) -> None:
    """In a forked child: die with `parent` (SIGKILL), or exit now if it is gone already;
    then every signal as a command expects it: default handling, nothing blocked."""
    prctl_set(PR_SET_PDEATHSIG, _signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)
    for signum in (*ENDINGS, _signal.SIGCHLD, _signal.SIGPIPE, _signal.SIGXFSZ):
        _signal.signal(signum, _signal.SIG_DFL)
    _signal.pthread_sigmask(_signal.SIG_SETMASK, ())


def exec_plugin(spawn: Spawn, fds: list[int], warden: int) -> None:
    """In the plugin's own process: die with the warden, take the pipes, become the plugin."""
    try:
        die_with(warden)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        if spawn.plan is not None:
            from . import _confine

            _confine.enter(spawn.plan, warden)
        os.closerange(3, _MAX_FD)
        if spawn.cpus:
            try:  # where bingo runs now, as a plugin forked by bingo itself would
                os.sched_setaffinity(0, spawn.cpus)
            except OSError:
                pass
        os.chdir(spawn.cwd)
        os.execve(spawn.path, spawn.argv, spawn.env)
    except OSError as exc:
        os.write(2, ("cannot run %s: %s\n" % (spawn.argv[0] if spawn.argv else spawn.path, exc.strerror)).encode())
        os._exit(127)
    finally:
        os._exit(127)


def _wait_for(pid: int, seconds: float) -> int | None:
    """The plugin's wait status if it ends within `seconds` (reaping others meanwhile)."""
    until = time.monotonic() + seconds
    while True:
        for done, status in _reap_all(frozenset((pid,))):
            if done == pid:
                return status
        if time.monotonic() >= until:
            return None
        time.sleep(_POLL)


def _finish(status: int) -> None:
    """Exit the way the plugin did."""
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        try:
            _signal.signal(signum, _signal.SIG_DFL)
        except (OSError, ValueError):
            pass  # SIGKILL and SIGSTOP have no handler to reset
        _signal.pthread_sigmask(_signal.SIG_UNBLOCK, (signum,))
        os.kill(os.getpid(), signum)
        os._exit(128 + signum)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def _end_plugin(plugin: int, grace: float) -> int | None:
    """SIGTERM, GRACE seconds, SIGKILL: the plugin's wait status."""
    try:
        os.kill(plugin, _signal.SIGTERM)
    except ProcessLookupError:
        pass
    status = _wait_for(plugin, grace)
    if status is None:
        try:
            os.kill(plugin, _signal.SIGKILL)
        except ProcessLookupError:
            pass
        status = _wait_for(plugin, _SWEEP_LIMIT)
    return status


def _bare(spawn: Spawn, fds: list[int], janitor: int) -> None:
    """In a child forked straight from the janitor (no warden): a session of its own, then
    the command; it dies with the janitor, which reports its exit and, being a subreaper,
    holds whatever it leaves behind. Never returns."""
    try:
        _signal.set_wakeup_fd(-1)
        os.setsid()
    except BaseException:
        os._exit(127)
    exec_plugin(spawn, fds, janitor)


def _warden(spawn: Spawn, fds: list[int], janitor: int, theirs: list[int]) -> None:
    """In the forked warden (born with the ending signals blocked, see `JanitorServer.spawn`):
    start the plugin, wait for it, sweep, exit as it did. Never returns.

    The ending signals and SIGCHLD stay blocked and are taken with `sigtimedwait`, never by
    a handler: a handler's exception could land just after `waitpid` reaped the plugin and
    lose how it ended (the plugin reads EOF and exits at the very moment bingo's death makes
    the janitor end its wardens)."""
    status: int | None = None
    plugin = 0
    try:
        _signal.pthread_sigmask(_signal.SIG_BLOCK, (*ENDINGS, _signal.SIGCHLD))
        _signal.set_wakeup_fd(-1)
        for signum in (*ENDINGS, _signal.SIGCHLD):
            _signal.signal(signum, _signal.SIG_DFL)
        for fd in theirs:  # the janitor's own: the control socket, its wake-up pipe
            os.close(fd)
        os.setsid()
        prctl_set(PR_SET_PDEATHSIG, _signal.SIGTERM)
        if os.getppid() != janitor:
            os._exit(1)
        prctl_set(PR_SET_CHILD_SUBREAPER, 1)
        warden = os.getpid()
        plugin = os.fork()
        if plugin == 0:
            exec_plugin(spawn, fds, warden)
        for fd in fds:
            os.close(fd)
        ending = False
        while status is None and not ending:
            status = next((reaped for _pid, reaped in _reap_all(frozenset((plugin,)))), None)
            if status is None:
                # A SIGCHLD sent since the reaping above is pending, so nothing is missed.
                taken = _signal.sigtimedwait((*ENDINGS, _signal.SIGCHLD), 1.0)
                ending = taken is not None and taken.si_signo in ENDINGS
        if status is None:
            status = _end_plugin(plugin, spawn.grace)
    except BaseException:  # nothing may escape a forked child: end what it started
        status = _end_plugin(plugin, 0) if plugin > 0 else None
    _sweep()
    _finish(status if status is not None else _signal.SIGKILL)


# --- the janitor: every plugin of one bingo run ----------------------------------------


class JanitorServer:
    """The janitor's end of the control socket, and the wardens it forked (one per plugin)."""

    def __init__(self, control: _socket.socket, bingo: int) -> None:
        self.control = control
        self.bingo = bingo
        self.wardens: set[int] = set()
        self.decoder = Decoder()
        self.fds: list[int] = []
        self.ending = False
        self.grace = _END_GRACE
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        self.sandbox: Any = None
        """`_Sandbox`, made at the first confined spawn or network request."""
        self.tmpdirs: dict[int, str] = {}
        self.confined: dict[int, Spawn] = {}
        self.swept: dict[int, list[str]] = {}
        """Per confined process, the `.git/commondir` files that did not exist when it was
        confined (`_sandbox.missing_commondirs`): one there when it ends is removed."""
        self.parked: dict[int, tuple[object, ...]] = {}
        """The processes forked and confined ahead of the next spawn without a warden (the
        `bash` tool's next command), handed to bingo, and their policy's key."""
        """Each confined warden's spawn, for the spare made when it ends."""
        """Each confined warden's TMPDIR, removed when the warden is reaped."""

    def send(self, message: Message) -> None:
        try:
            self.control.sendall(encode(message))
        except OSError:
            self.ending = True  # bingo is gone

    def receive(self) -> None:
        try:
            data, ancillary, _flags, _address = self.control.recvmsg(1 << 16, _socket.CMSG_SPACE(16 * 4))
        except InterruptedError:
            return
        except OSError:
            data, ancillary = b"", []
        if not data:
            self.ending = True  # bingo closed the socket, or died
            return
        for level, kind, payload in ancillary:
            if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
                usable = len(payload) - len(payload) % 4
                self.fds.extend(memoryview(payload)[:usable].cast("i"))
        for message in self.decoder.feed(data):
            match message:
                case ("network", int(request_id)):
                    self.network(request_id)
                case ("listener", int(request_id)):
                    self.network(request_id, another=True)
                case _:
                    spawn = _read_spawn(message)
                    if spawn is not None:
                        self.spawn(spawn)

    def _sandbox(self) -> Any:
        if self.sandbox is None:
            from ._sandbox import Sandbox

            self.sandbox = Sandbox()
        return self.sandbox

    def network(self, request_id: int, *, another: bool = False) -> None:
        """Answer bingo's request for the listener in the run's network namespace (made now
        if it is not yet), or (`another`) one more listener made in it:
        `("network", id, port)` with the listener's fd, or `("nonetwork", id, reason)`."""
        try:
            netns = self._sandbox().network()
        except OSError as exc:
            netns = f"the sandbox cannot be used here: {exc.strerror or exc}"
        if isinstance(netns, str):
            self.send(("nonetwork", request_id, netns))
            return
        listener, port = netns.listener, netns.port
        if another:
            from ._netns import another_listener

            made = another_listener(netns)
            if isinstance(made, str):
                self.send(("nonetwork", request_id, made))
                return
            listener, port = made
        data = encode(("network", request_id, port))
        payload = listener.to_bytes(4, sys.byteorder)
        try:
            sent = self.control.sendmsg([data], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, payload)])
            if sent < len(data):
                self.control.sendall(data[sent:])
        except OSError:
            self.ending = True
        finally:
            if another:
                os.close(listener)  # bingo holds its own copy now

    def spawn(self, spawn: Spawn) -> None:
        fds, self.fds = self.fds[:FDS], self.fds[FDS:]
        if len(fds) < FDS:
            for fd in fds:
                os.close(fd)
            self.send(("failed", spawn.request_id, 9, "the plugin's pipes did not arrive"))
            return
        if spawn.confine is not None:
            try:
                self._sandbox().prepare(spawn)
            except OSError as exc:
                for fd in fds:
                    os.close(fd)
                self.send(("failed", spawn.request_id, exc.errno or 1, f"cannot confine it: {exc.strerror or exc}"))
                return
        janitor = os.getpid()
        self.grace = max(self.grace, spawn.grace)
        # The warden is born with the ending signals blocked, so that one sent the moment
        # bingo learns its pid is held until its own handler is in place.
        previous = _signal.pthread_sigmask(_signal.SIG_BLOCK, ENDINGS)
        try:
            pid = os.fork()
        except OSError as exc:
            pid = -1
            self.send(("failed", spawn.request_id, exc.errno or 0, exc.strerror or str(exc)))
        if pid == 0:
            if not spawn.warden:
                _bare(spawn, fds, janitor)
            _warden(spawn, fds, janitor, [self.control.fileno(), self.wake_r, self.wake_w, *self.fds])
        _signal.pthread_sigmask(_signal.SIG_SETMASK, previous)
        for fd in fds:
            os.close(fd)
        if spawn.plan is not None:
            os.close(spawn.plan.ruleset)
        if pid > 0:
            self.wardens.add(pid)
            if spawn.tmpdir:
                self.tmpdirs[pid] = spawn.tmpdir
            self.send(("spawned", spawn.request_id, pid))
            if spawn.plan is not None:
                self.confined[pid] = spawn
                from ._sandbox import missing_commondirs

                self.swept[pid] = missing_commondirs(spawn.confine)
        elif spawn.tmpdir:
            os.rmdir(spawn.tmpdir)

    def _park(self, spawn: Spawn) -> None:
        """Fork and confine the process the next spawn like `spawn` will run in (`_park.park`)."""
        from ._park import park

        park(self, spawn)

    def reap(self) -> None:
        for pid, status in _reap_all(frozenset(self.wardens)):
            self.wardens.discard(pid)
            # One bingo let go unused (out of date, or one too many) is not replaced.
            released = (
                self.parked.pop(pid, None) is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == RELEASED
            )
            if os.WIFSIGNALED(status):
                # It may have died before its sweep (SIGKILLed with its group): what it
                # left is ours now.
                _sweep(frozenset(self.wardens))
            # A planted commondir is gone before bingo hears of the exit: once it has, the
            # person's own git may run at any moment.
            planted = self.swept.pop(pid, [])
            if planted:
                from ._sandbox import sweep_commondirs

                sweep_commondirs(planted)
            self.send(("exit", pid, status))
            self._remove_tmpdir(pid)
            confined = self.confined.pop(pid, None)
            if confined is not None:
                # Once it has ended, nothing waits: make the next one's TMPDIR and ruleset
                # (without a warden: the next process itself, confined and waiting).
                if confined.warden:
                    self.sandbox.rearm(confined)
                elif not released:
                    self._park(confined)

    def _remove_tmpdir(self, warden: int) -> None:
        tmpdir = self.tmpdirs.pop(warden, "")
        if tmpdir:
            from ._confine import remove_tree

            remove_tree(tmpdir)

    def run(self) -> None:
        while not self.ending:
            try:
                ready, _, _ = select.select([self.control, self.wake_r], [], [])
            except InterruptedError:
                continue
            if self.wake_r in ready:
                try:
                    os.read(self.wake_r, 4096)
                except BlockingIOError:
                    pass
                self.reap()
            if self.control in ready:
                self.receive()

    def end(self) -> None:
        """bingo is gone: end every warden (each ends its plugin within its grace, then
        sweeps), then anything left."""
        for signum in ENDINGS:
            _signal.signal(signum, _signal.SIG_IGN)
        for pid in self.wardens:
            try:
                os.kill(pid, _signal.SIGTERM)
            except ProcessLookupError:
                pass
        until = time.monotonic() + self.grace + _SWEEP_LIMIT
        while self.wardens and time.monotonic() < until:
            for pid, _status in _reap_all(frozenset(self.wardens)):
                self.wardens.discard(pid)
            time.sleep(_POLL)
        for pid in self.wardens:
            try:
                os.killpg(pid, _signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        _sweep()
        for pid in list(self.tmpdirs):
            self._remove_tmpdir(pid)
        if self.sandbox is not None:
            self.sandbox.close()


def main(args: list[str]) -> None:
    """The janitor's life, from `FD BINGO_PID MAIN` to its exit once bingo is gone."""
    control = _socket.socket(fileno=int(args[0]))
    control.setblocking(True)
    bingo = int(args[1])
    janitor = JanitorServer(control, bingo)
    prctl_set(PR_SET_CHILD_SUBREAPER, 1)

    def wake(signum: int, frame: object) -> None:
        if signum != _signal.SIGCHLD:
            janitor.ending = True

    for signum in (*ENDINGS, _signal.SIGCHLD):
        _signal.signal(signum, wake)
    _signal.set_wakeup_fd(janitor.wake_w)
    if args[2:3] == ["1"]:
        # Die with bingo (the thread that spawned us is its main thread); if it died before
        # this took effect, we were re-parented already.
        prctl_set(PR_SET_PDEATHSIG, _signal.SIGTERM)
    if os.getppid() != bingo:
        janitor.ending = True
    janitor.run()
    janitor.end()
    os._exit(0)
