"""System calls from Python, by machine, and what this kernel offers the sandbox (ADR-0030).

Owns the system call numbers the sandbox uses on x86-64 and arm64 (`MACHINES`, with those the
seccomp filter refuses), reaching libc's `syscall` and `prctl` through `ctypes` (`lib`, loaded
when first asked: an unconfined run never pays for it), and `examine`: Landlock's ABI, whether
user namespaces look allowed and whether seccomp filters exist, read without changing
anything, with what is missing in words a person can act on. It makes no rule, filter or
namespace (`_landlock.py`, `_seccomp.py`, `_netns.py`) and confines nothing (`_confine.py`).
It imports only the standard library (the janitor imports nothing of bingo's, ADR-0013).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: the janitor imports nothing it can do without
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CLONE_NEWNET",
    "CLONE_NEWNS",
    "CLONE_NEWUSER",
    "ENOSYS",
    "LANDLOCK_ADD",
    "LANDLOCK_CREATE",
    "LANDLOCK_RESTRICT",
    "LINUX",
    "MACHINE",
    "MACHINES",
    "Examined",
    "examine",
    "landlock_abi",
    "lib",
    "prctl",
    "read",
    "syscall",
    "userns_refusal",
]

_UNIFIED_REFUSED = {
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
}
"""Refused system calls numbered alike on every machine (those added since Linux 5.1 share one
table), for each machine's `refused` below."""

MACHINES: dict[str, dict[str, Any]] = {
    "x86_64": {
        "arch": 0xC000003E,
        "setns": 308,
        "unshare": 272,
        "capset": 126,
        "x32": True,
        "refused": {
            "unshare": 272,
            "setns": 308,
            "mount": 165,
            "umount2": 166,
            "pivot_root": 155,
            "chroot": 161,
            **_UNIFIED_REFUSED,
            "keyctl": 250,
            "add_key": 248,
            "request_key": 249,
            "bpf": 321,
            "init_module": 175,
            "finit_module": 313,
            "delete_module": 176,
            "kexec_load": 246,
            "kexec_file_load": 320,
            "userfaultfd": 323,
            "perf_event_open": 298,
            "open_by_handle_at": 304,
        },
        "clone": 56,
        "clone3": 435,
        "socket": 41,
        "sends": {44: 3, 46: 2, 307: 3},  # sendto, sendmsg, sendmmsg: which argument holds the flags
    },
    "aarch64": {
        "arch": 0xC00000B7,
        "setns": 268,
        "unshare": 97,
        "capset": 91,
        "x32": False,
        "refused": {
            "unshare": 97,
            "setns": 268,
            "mount": 40,
            "umount2": 39,
            "pivot_root": 41,
            "chroot": 51,
            **_UNIFIED_REFUSED,
            "keyctl": 219,
            "add_key": 217,
            "request_key": 218,
            "bpf": 280,
            "init_module": 105,
            "finit_module": 273,
            "delete_module": 106,
            "kexec_load": 104,
            "kexec_file_load": 294,
            "userfaultfd": 282,
            "perf_event_open": 241,
            "open_by_handle_at": 265,
        },
        "clone": 220,
        "clone3": 435,
        "socket": 198,
        "sends": {206: 3, 211: 2, 269: 3},
    },
}
LANDLOCK_CREATE, LANDLOCK_ADD, LANDLOCK_RESTRICT = 444, 445, 446  # the same on both
CLONE_NEWUSER = 0x10000000
CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
_CREATE_RULESET_VERSION = 1
"""landlock_create_ruleset's flag that asks for the ABI version."""
ENOSYS = 38

MACHINE = os.uname().machine if hasattr(os, "uname") else ""
LINUX = sys.platform.startswith("linux")
USE_JANITOR = LINUX and hasattr(os, "posix_spawn")
"""Whether the janitor runs here (Linux): where it does not, a plugin is spawned directly.
Here, not in `_client.py`, so that the sandbox's probe asks it without importing the client."""

_c: Any = None
"""`ctypes` and libc, once asked for: (ctypes, syscall, prctl)."""


def lib() -> Any:
    global _c
    if _c is None:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        syscall = libc.syscall
        syscall.restype = ctypes.c_long
        prctl = libc.prctl
        prctl.restype = ctypes.c_int
        prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        _c = (ctypes, syscall, prctl)
    return _c


def syscall(number: int, *args: int) -> int:
    """A raw system call; its result, or OSError with the errno."""
    ctypes, raw, _raw_prctl = lib()
    result = raw(ctypes.c_long(number), *(ctypes.c_long(arg) for arg in args))
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return result


def prctl(option: int, a: int = 0, b: int = 0, c: int = 0, d: int = 0) -> int:
    ctypes, _raw_syscall, raw = lib()
    result = raw(option, a, b, c, d)
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return result


class Examined:
    """What this kernel offers the sandbox, and what is missing in words."""

    __slots__ = ("landlock", "missing", "seccomp", "userns")

    def __init__(self, landlock: int, userns: bool, seccomp: bool, missing: list[str]) -> None:
        self.landlock = landlock
        self.userns = userns
        self.seccomp = seccomp
        self.missing = missing


def read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as file:
            return file.read().strip()
    except OSError:
        return None


def landlock_abi() -> tuple[int, str]:
    """Landlock's ABI version here (0: none) and, when none, why in words."""
    try:
        return syscall(LANDLOCK_CREATE, 0, 0, _CREATE_RULESET_VERSION), ""
    except OSError as exc:
        if exc.errno == ENOSYS:
            return 0, "Landlock is not in this kernel (needs Linux 5.13+ built with CONFIG_SECURITY_LANDLOCK)"
        if exc.errno == 95:  # EOPNOTSUPP
            return (
                0,
                "Landlock is not enabled in this kernel (needs Linux 5.13+ with landlock in the lsm= boot parameter)",
            )
        return 0, f"Landlock cannot be used here ({exc.strerror})"


def userns_refusal() -> str:
    """Why unprivileged user namespaces cannot be made here, from the kernel's settings;
    "" when nothing says they are refused (making one, `make_network`, is the proof)."""
    if read("/proc/sys/user/max_user_namespaces") == "0":
        return "user namespaces are disabled (the sysctl user.max_user_namespaces is 0)"
    if os.geteuid() != 0:
        if read("/proc/sys/kernel/unprivileged_userns_clone") == "0":
            return "unprivileged user namespaces are disabled (the sysctl kernel.unprivileged_userns_clone is 0)"
        if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1":
            return (
                "unprivileged user namespaces are refused (Ubuntu 24.04's AppArmor restriction: "
                "the sysctl kernel.apparmor_restrict_unprivileged_userns is 1)"
            )
    if not os.path.exists("/proc/self/ns/net"):
        return "network namespaces are not in this kernel (CONFIG_NET_NS)"
    return ""


def examine() -> Examined:
    """What this kernel offers, read without changing anything (a system call and a few
    files in /proc): Landlock's ABI, whether user namespaces look allowed, seccomp filters."""
    if not LINUX:
        return Examined(
            0, False, False, [f"this is not Linux ({sys.platform}): the kernel confinement bingo uses is Linux's"]
        )
    missing: list[str] = []
    if MACHINE not in MACHINES:
        missing.append(f"bingo's seccomp filter is written for x86-64 and arm64, not {MACHINE}")
        return Examined(0, False, False, missing)
    abi, why = landlock_abi()
    if why:
        missing.append(why)
    status = read("/proc/self/status") or ""
    seccomp = "Seccomp_filters:" in status or "Seccomp:" in status
    if not seccomp:
        missing.append("seccomp filters are not in this kernel (needs CONFIG_SECCOMP_FILTER)")
    refusal = userns_refusal()
    if refusal:
        missing.append(refusal)
    return Examined(abi, not refusal, seccomp, missing)
