"""The run's user and network namespaces, and the listeners made inside them (ADR-0030, ADR-0031).

Owns making the run's user + network namespace once (`make_network`: in a forked child that
maps our own ids, brings loopback up, listens on 127.0.0.1 and hands the namespaces' fds and
the listener back), and one more listener inside it for each confined process
(`another_listener`). Joining the namespaces in a confined child is `_confine.enter`'s.
It imports only the standard library (the janitor imports nothing of bingo's, ADR-0013).
"""

from __future__ import annotations

import os
import sys

from ._syscall import CLONE_NEWNET, CLONE_NEWUSER, MACHINE, MACHINES, syscall, userns_refusal

TYPE_CHECKING = False  # not typing's: the janitor imports nothing it can do without
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["Netns", "another_listener", "make_network"]


class Netns:
    """The run's user and network namespaces (fds), and the TCP listener made inside them."""

    __slots__ = ("listener", "net", "port", "user")

    def __init__(self, user: int, net: int, listener: int, port: int) -> None:
        self.user = user
        self.net = net
        self.listener = listener
        self.port = port


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _hand_back(report: int, held: list[int]) -> None:
    """In a forked child: listen on 127.0.0.1 (in the namespaces it is in), and send `held`
    and the listener's fd, with `ok PORT`, through `report`."""
    import _socket

    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(512)
    port = listener.getsockname()[1]
    payload = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (*held, listener.fileno()))
    sock = _socket.socket(fileno=report)
    sock.sendmsg([b"ok %d" % port], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, payload)])


def _say(report: int, text: str) -> None:
    """In a forked child: tell the parent why not (it may be gone)."""
    try:
        os.write(report, text.encode())
    except OSError:
        pass


def _in_new_namespaces(report: int) -> None:
    """In a forked child: make the namespaces, map our own ids, bring loopback up, listen on
    127.0.0.1, and send the three fds (user, net, listener) and the port back. Never returns."""
    import _socket
    import fcntl

    stage = "making a user namespace"
    try:
        uid, gid = os.geteuid(), os.getegid()
        table = MACHINES[MACHINE]
        syscall(table["unshare"], CLONE_NEWUSER | CLONE_NEWNET)
        stage = "mapping its user"
        try:
            _write("/proc/self/setgroups", "deny")
        except OSError:
            pass
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
        stage = "bringing its loopback up"
        probe = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
        flags = 0x1 | 0x8 | 0x40  # IFF_UP | IFF_LOOPBACK | IFF_RUNNING
        ifreq = b"lo".ljust(16, b"\0") + flags.to_bytes(2, sys.byteorder) + bytes(22)
        fcntl.ioctl(probe.fileno(), 0x8914, ifreq)  # SIOCSIFFLAGS
        probe.close()
        stage = "listening on its loopback"
        namespaces = [os.open("/proc/self/ns/user", os.O_RDONLY), os.open("/proc/self/ns/net", os.O_RDONLY)]
        _hand_back(report, namespaces)
    except OSError as exc:
        _say(report, f"no {stage}: {exc.strerror or exc}")
    finally:
        os._exit(0)


def make_network() -> Netns | str:
    """The run's user + network namespace with loopback up and a listener on 127.0.0.1
    inside, made in a forked child that exits once it has handed its fds over; or why not,
    in words."""
    refusal = userns_refusal()
    if refusal:
        return refusal
    if MACHINE not in MACHINES:
        return f"namespaces are made only on x86-64 and arm64 here, not {MACHINE}"
    text, fds = _from_child(_in_new_namespaces, 3)
    if fds is None:
        reason = text.removeprefix("no ")
        if "making a user namespace" in reason or "mapping its user" in reason or "bringing its loopback up" in reason:
            return f"a user namespace could not be used ({reason}); unprivileged user namespaces are refused here"
        return f"the network namespace could not be made ({reason})"
    return Netns(fds[0], fds[1], fds[2], int(text[3:]))


def _listening_in(netns: Netns, report: int) -> None:
    """In a forked child: join the run's namespaces, listen on 127.0.0.1 there, and send the
    listener's fd and its port back. Never returns."""

    try:
        table = MACHINES[MACHINE]
        syscall(table["setns"], netns.user, CLONE_NEWUSER)
        syscall(table["setns"], netns.net, CLONE_NEWNET)
        _hand_back(report, [])
    except OSError as exc:
        _say(report, f"no listener: {exc.strerror or exc}")
    finally:
        os._exit(0)


def another_listener(netns: Netns) -> tuple[int, int] | str:
    """One more TCP listener on 127.0.0.1 inside the run's namespaces (made in a forked child
    that joins them), and its port: a proxy of its own for each confined process, so that each
    request is decided for who made it (ADR-0031); or why not, in words."""
    text, fds = _from_child(lambda report: _listening_in(netns, report), 1)
    if fds is None:
        return f"another listener could not be made in the network namespace ({text.removeprefix('no ')})"
    return fds[0], int(text[3:])


def _from_child(child: Callable[[int], None], count: int) -> tuple[str, list[int] | None]:
    """Fork a child that runs `child` with its end of a socket pair (it never returns) and
    hands back, within 5 s, one line and `count` fds: the line, and the fds when the line is
    `ok …` and they all came (None otherwise, any that came closed)."""
    import _socket

    ours, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        pid = os.fork()
        if pid == 0:
            ours.close()
            child(theirs.detach())
        theirs.close()
        ours.settimeout(5.0)
        try:
            data, ancillary, _flags, _address = ours.recvmsg(256, _socket.CMSG_SPACE(count * 4))
        except OSError as exc:
            data, ancillary = f"no answer: {exc}".encode(), []
        finally:
            os.waitpid(pid, 0)
    finally:
        ours.close()
    fds: list[int] = []
    for level, kind, payload in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            fds.extend(memoryview(payload)[: len(payload) - len(payload) % 4].cast("i"))
    text = data.decode("utf-8", "replace")
    if not text.startswith("ok ") or len(fds) != count:
        for fd in fds:
            os.close(fd)
        return text, None
    return text, fds
