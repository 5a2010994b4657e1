"""The seccomp filter every confined process runs under (ADR-0030).

Owns the BPF program (`seccomp_program`: which system calls, socket kinds and flags a
confined process is refused, on x86-64 and arm64) and the `struct sock_fprog` that carries it
(`seccomp_filter`, made once in the janitor). Installing it is `_confine.enter`'s.
It imports only the standard library (the janitor imports nothing of bingo's, ADR-0013).
"""

from __future__ import annotations

from ._syscall import ENOSYS, MACHINES, lib

TYPE_CHECKING = False  # not typing's: the janitor imports nothing it can do without
if TYPE_CHECKING:
    from typing import Any

__all__ = ["seccomp_filter", "seccomp_program"]

_CLONE_NEW_ANY = 0x00000080 | 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
_EPERM = 1
_AF_INET, _AF_INET6 = 2, 10
_SOCK_STREAM = 1
_MSG_FASTOPEN = 0x20000000
_IPPROTO_TCP = 6

# BPF, as `linux/filter.h` and `linux/seccomp.h` spell it
_LD_W_ABS = 0x20
_JEQ = 0x15
_JSET = 0x45
_JGE = 0x35
_AND = 0x54
_RET = 0x06
_ALLOW = 0x7FFF0000
_KILL_PROCESS = 0x80000000
_ERRNO = 0x00050000


def seccomp_program(machine: str) -> bytes:
    """The filter every confined process runs under (BPF, as `struct sock_filter[]`): no
    socket but TCP over IPv4/IPv6 (no UDP, raw, packet, netlink, nor AF_UNIX: socketpair
    stays), no TCP Fast Open (a connect inside sendto/sendmsg), no new namespaces (unshare,
    clone's CLONE_NEW*, clone3 answered ENOSYS so that libc falls back to clone), no setns,
    no mounts, no io_uring (its operations would pass the socket check), no keyrings,
    modules, kexec, bpf, perf, userfaultfd or file handles. Another ABI's system calls (x32,
    i386) kill the process."""
    table = MACHINES[machine]
    code: list[tuple[int, int, int, Any]] = []  # (op, jt label, jf label, k); labels resolved below
    eperm = _ERRNO | _EPERM

    def ins(op: int, k: int, jt: Any = 0, jf: Any = 0) -> None:
        code.append((op, jt, jf, k))

    ins(_LD_W_ABS, 4)  # arch
    ins(_JEQ, table["arch"], 0, "kill")
    ins(_LD_W_ABS, 0)  # nr
    if table["x32"]:
        ins(_JGE, 0x40000000, "kill", 0)
    for number in sorted(set(table["refused"].values())):
        ins(_JEQ, number, "eperm", 0)
    ins(_JEQ, table["clone3"], "enosys", 0)
    ins(_JEQ, table["clone"], "clone", 0)
    ins(_JEQ, table["socket"], "socket", 0)
    sends = sorted(table["sends"].items())
    for number, _argument in sends:
        ins(_JEQ, number, f"send{number}", 0)
    ins(_RET, _ALLOW)
    labels: dict[str, int] = {}
    for number, argument in sends:
        # TCP Fast Open connects inside sendto/sendmsg, where Landlock's connect rule may
        # not look: refused, as is UDP.
        labels[f"send{number}"] = len(code)
        ins(_LD_W_ABS, 16 + 8 * argument)
        ins(_JSET, _MSG_FASTOPEN, "eperm", "allow")
    labels["clone"] = len(code)
    ins(_LD_W_ABS, 16)  # args[0], low half: the flags
    ins(_JSET, _CLONE_NEW_ANY, "eperm", 0)
    ins(_RET, _ALLOW)
    labels["socket"] = len(code)
    ins(_LD_W_ABS, 16)  # domain
    ins(_JEQ, _AF_INET, "type", 0)
    ins(_JEQ, _AF_INET6, "type", "eperm")
    labels["type"] = len(code)
    ins(_LD_W_ABS, 24)  # type
    ins(_AND, 0xF)  # less SOCK_NONBLOCK and SOCK_CLOEXEC
    ins(_JEQ, _SOCK_STREAM, 0, "eperm")
    ins(_LD_W_ABS, 32)  # protocol
    ins(_JEQ, 0, "allow", 0)
    ins(_JEQ, _IPPROTO_TCP, "allow", "eperm")
    labels["allow"] = len(code)
    ins(_RET, _ALLOW)
    labels["eperm"] = len(code)
    ins(_RET, eperm)
    labels["enosys"] = len(code)
    ins(_RET, _ERRNO | ENOSYS)
    labels["kill"] = len(code)
    ins(_RET, _KILL_PROCESS)
    out = bytearray()
    for index, (op, jt, jf, k) in enumerate(code):
        jumps = [labels[j] - index - 1 if isinstance(j, str) else j for j in (jt, jf)]
        assert all(0 <= j < 256 for j in jumps)
        out += op.to_bytes(2, "little") + bytes(jumps) + k.to_bytes(4, "little")
    return bytes(out)


def seccomp_filter(machine: str) -> Any:
    """`struct sock_fprog` for `seccomp_program`, kept alive by the caller."""
    ctypes = lib()[0]
    program = seccomp_program(machine)
    buffer = ctypes.create_string_buffer(program, len(program))

    class _Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = _Fprog(len(program) // 8, ctypes.addressof(buffer))
    fprog._keep = buffer  # type: ignore[attr-defined]
    return fprog
