"""The kernel's confinement, reached from Python: Landlock, seccomp, capabilities, the run's
user and network namespaces and each process's own mount namespace (ADR-0030).

Owns every system call the sandbox makes and what the kernel offers (`examine`, in words a
person can act on). Three parts, by where they run:
  - in the janitor, before any fork: `Rules` (the walk that turns "read everything but X"
    into Landlock's allow-only rules, cached per policy and rebuilt when a directory on the
    walk changes; in the run's user namespace, the protected paths' read-only bind mounts,
    `Mounts`, rather than a walk around them), `ruleset` (a fresh Landlock ruleset for one process: the cached rules, its
    own TMPDIR, the devices, the proxy's port), `make_network` (the run's user + network
    namespace, held by fd, its loopback up and a TCP listener on 127.0.0.1 made inside it);
  - in the forked child, just before `exec` (single-threaded, no allocation worth naming):
    `enter` joins the namespaces (and makes a mount namespace of its own: `own_mounts`),
    sets no_new_privs, enforces the ruleset, drops every capability and installs the
    seccomp filter;
  - in bingo's process: `examine`, for `bingo.sandbox.probe()`.

It imports only the standard library (the janitor's process imports nothing of bingo's,
ADR-0013), and `ctypes` only when first asked to confine or examine: an unconfined run never
pays for it. Linux on x86-64 and arm64 only (the seccomp filter names their system calls).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: the janitor imports nothing it can do without
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "Examined",
    "Mounts",
    "Netns",
    "Plan",
    "Rules",
    "another_listener",
    "enter",
    "examine",
    "fresh",
    "make_network",
    "own_mounts",
    "remove_tree",
    "restrict_tcp",
    "ruleset",
]

# --- Landlock's constants (include/uapi/linux/landlock.h) -------------------------------

_EXECUTE = 1 << 0
_WRITE_FILE = 1 << 1
_READ_FILE = 1 << 2
_READ_DIR = 1 << 3
_REMOVE_DIR = 1 << 4
_REMOVE_FILE = 1 << 5
_MAKE_CHAR = 1 << 6
_MAKE_DIR = 1 << 7
_MAKE_REG = 1 << 8
_MAKE_SOCK = 1 << 9
_MAKE_FIFO = 1 << 10
_MAKE_BLOCK = 1 << 11
_MAKE_SYM = 1 << 12
_REFER = 1 << 13  # ABI 2
_TRUNCATE = 1 << 14  # ABI 3
_FILE_ONLY = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE
"""The rights a rule on a file (not a directory) may carry."""
READ = _EXECUTE | _READ_FILE
"""What "read" grants. Listing a directory (READ_DIR) is not handled at all: names are
listable everywhere, contents are not (ADR-0030)."""
WRITE = (
    _WRITE_FILE
    | _REMOVE_DIR
    | _REMOVE_FILE
    | _MAKE_DIR
    | _MAKE_REG
    | _MAKE_SOCK
    | _MAKE_FIFO
    | _MAKE_SYM
    | _REFER
    | _TRUNCATE
)
"""What "write" grants (never device nodes)."""
_HANDLED_FS = READ | WRITE | _MAKE_CHAR | _MAKE_BLOCK
_CONNECT_TCP = 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX = 1 << 0  # ABI 6
_SCOPE_SIGNAL = 1 << 1  # ABI 6
_RULE_PATH_BENEATH = 1
_RULE_NET_PORT = 2
_CREATE_RULESET_VERSION = 1

# --- system calls, by machine -------------------------------------------------------------

_MACHINES: dict[str, dict[str, Any]] = {
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
_LANDLOCK_CREATE, _LANDLOCK_ADD, _LANDLOCK_RESTRICT = 444, 445, 446  # the same on both
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNS = 0x00020000
_CLONE_NEWNET = 0x40000000
_CLONE_NEW_ANY = 0x00000080 | 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_LOCKED = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
"""The flags a bind mount keeps from its source in a user namespace (the kernel locks them:
a remount that drops one is refused); statvfs's ST_ values are the same bits."""
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_PR_CAPBSET_DROP = 24
_PR_SET_SECUREBITS = 28
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_PR_SET_PDEATHSIG = 1
_SECUREBITS = 0x01 | 0x02 | 0x04 | 0x08 | 0x20 | 0x40 | 0x80
"""NOROOT, NO_SETUID_FIXUP, NO_CAP_AMBIENT_RAISE and KEEP_CAPS off, each locked."""
_EPERM = 1
_ENOSYS = 38
_AF_INET, _AF_INET6 = 2, 10
_SOCK_STREAM = 1
_MSG_FASTOPEN = 0x20000000
_IPPROTO_TCP = 6

MACHINE = os.uname().machine if hasattr(os, "uname") else ""
LINUX = sys.platform.startswith("linux")

_c: Any = None
"""`ctypes` and libc, once asked for: (ctypes, syscall, prctl)."""


def _lib() -> Any:
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


def _sys(number: int, *args: int) -> int:
    """A raw system call; its result, or OSError with the errno."""
    ctypes, syscall, _prctl = _lib()
    result = syscall(ctypes.c_long(number), *(ctypes.c_long(arg) for arg in args))
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return result


def _prctl(option: int, a: int = 0, b: int = 0, c: int = 0, d: int = 0) -> int:
    ctypes, _syscall, prctl = _lib()
    result = prctl(option, a, b, c, d)
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return result


# --- what the kernel offers ----------------------------------------------------------------


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
        return _sys(_LANDLOCK_CREATE, 0, 0, _CREATE_RULESET_VERSION), ""
    except OSError as exc:
        if exc.errno == _ENOSYS:
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
    if MACHINE not in _MACHINES:
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


# --- the walk: "everything but X" as allow-only rules ----------------------------------


def _under(path: str, root: str) -> bool:
    return path == root or root == "/" or path.startswith(root + "/")


class Rules:
    """Landlock rules for one policy's paths, as O_PATH fds held by the janitor: read beneath
    "/" but `denied`; read and write beneath each of `writable` but `protected` (and
    `denied`). Landlock only allows, and a rule holds for everything beneath its directory,
    so a directory above an exception gets no rule: each of its entries does (the walk),
    but the one leading to the exception, which is walked in turn. Entries made in such a
    directory after the walk have no rule (refused) until the walk is made again: `stale`
    says when a walked directory changed.

    In a mount namespace of the process's own (`mounting`: the run's user namespace is in
    force), a protected path that exists is not walked around: it is bound read-only onto
    itself (`mounts`), and each writable root is granted whole, so that new entries beside
    a protected path (a new file at the project's root, `.git/index.lock`) are allowed."""

    __slots__ = ("fds", "mounts", "walked")

    def __init__(self) -> None:
        self.fds: list[tuple[int, int]] = []
        self.walked: list[tuple[str, int]] = []
        """The paths whose change makes these rules out of date, with their mtime (-1: the
        path did not exist, and must not appear)."""
        self.mounts: Mounts | None = None

    @classmethod
    def reading(cls, denied: list[str]) -> Rules:
        """Read beneath "/" but `denied`."""
        rules = cls()
        rules._grant("/", [*denied, *ALWAYS_DENIED], READ)
        return rules

    @classmethod
    def writing(cls, writable: list[str], protected: list[str], denied: list[str], mounting: bool = False) -> Rules:
        """Read and write beneath each of `writable` but `protected` and `denied`; with
        `mounting`, the protected paths are left to `mounts` (`_mounted`; the walk stays for
        `denied` and for a protected path that is a symbolic link)."""
        rules = cls()
        walked = rules._mounted(writable, protected) if mounting else protected
        for root in writable:
            rules._grant(root, [*walked, *denied, *ALWAYS_DENIED], READ | WRITE)
        return rules

    def _mounted(self, writable: list[str], protected: list[str]) -> list[str]:
        """Sort `protected` (ADR-0030, 2026-12-04): each that exists is bound read-only
        (`mounts`), with each directory between it and its writable root bound onto itself
        (read and write: a mount point cannot be renamed or removed, so `.git` cannot be
        moved aside and remade). A missing `.git/hooks` under an existing `.git` is made
        (empty) first: git's own init makes it, and a missing one is where a planted hook
        would go. Another missing one is left creatable (the project's `.bingo/` and
        `.mcp.json` are under trust; walking around it would close every directory above
        it, the project's root first). A symbolic link keeps the walk (a mount would land on
        its target, and the link itself could be replaced). Returns those still walked."""
        import stat

        walk: list[str] = []
        binds: list[str] = []
        for path in sorted(protected):
            if not any(_under(path, root) for root in writable) or any(_under(path, bound) for bound in binds):
                continue  # nothing writes there anyway, or it is inside one bound already
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                mode = None
            except OSError:
                walk.append(path)
                continue
            parent = os.path.dirname(path)
            if mode is None and os.path.basename(path) == "hooks" and os.path.basename(parent) == ".git":
                if _make_beneath(writable, path):
                    mode = os.lstat(path).st_mode
            if mode is None:
                self.walked.append((path, -1))  # left creatable; one that appears is bound next time
                continue
            if stat.S_ISLNK(mode):
                walk.append(path)
                continue
            try:
                self.walked.append((path, os.stat(path).st_mtime_ns))
            except OSError:
                walk.append(path)
                continue
            binds.append(path)
        pins: set[str] = set()
        for path in binds:
            above = os.path.dirname(path)
            while above != "/" and any(_under(os.path.dirname(above), root) for root in writable):
                pins.add(above)
                above = os.path.dirname(above)
        self.mounts = Mounts(sorted(pins, key=lambda p: p.count("/")), binds)
        return walk

    def _grant(self, path: str, excluded: list[str], access: int) -> None:
        inside = [other for other in excluded if _under(other, path)]
        if path in inside:
            return
        if not inside:
            self._add(path, access)
            return
        try:
            self.walked.append((path, os.stat(path).st_mtime_ns))
            entries = list(os.scandir(path))
        except OSError:
            return
        for entry in entries:
            if entry.is_symlink():
                continue  # what it points at is reached by its own path, under its own rules
            self._grant(entry.path, inside, access)

    def _add(self, path: str, access: int) -> None:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            return
        directory = os.fstat(fd).st_mode & 0o170000 == 0o040000
        self.fds.append((fd, access if directory else access & _FILE_ONLY))

    def stale(self) -> bool:
        return not fresh(self.walked)

    def close(self) -> None:
        for fd, _access in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []


def _make_beneath(writable: list[str], path: str) -> bool:
    """Make the directory `path` (0755) beneath its writable root, never following a link
    on the way (an earlier process could have planted one, to have the janitor make a
    directory elsewhere); whether it was made."""
    root = next((root for root in writable if root != "/" and _under(path, root) and path != root), "")
    if not root:
        return False
    *middle, name = os.path.relpath(path, root).split("/")
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        for part in middle:
            below = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = below
        os.mkdir(name, 0o755, dir_fd=fd)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def fresh(walked: list[tuple[str, int]]) -> bool:
    """Whether each path still has the mtime it was walked with (-1: still missing)."""
    for path, mtime in walked:
        try:
            now = os.stat(path).st_mtime_ns
        except OSError:
            now = -1
        if now != mtime:
            return False
    return True


class Mounts:
    """A process's own mount namespace, made in the child (`own_mounts`) before Landlock:
    `pins` bound onto themselves (outermost first), then each of `binds` bound onto itself
    and remounted read-only (keeping the flags the kernel locks in a user namespace:
    nosuid, nodev, noexec as the source has them; atime is kept by the remount), then a
    devpts of its own over /dev/pts (/dev/ptmx opens the devpts mounted beside it, Linux
    4.7+, so it needs no bind). The paths are held as C strings, made here, in the janitor."""

    __slots__ = ("binds", "devpts", "options", "pins", "pts", "root", "strings")

    def __init__(self, pins: list[str], binds: list[str]) -> None:
        ctypes = _lib()[0]
        self.strings: list[Any] = []

        def c(text: str) -> int:
            buffer = ctypes.create_string_buffer(os.fsencode(text))
            self.strings.append(buffer)
            return ctypes.addressof(buffer)

        self.pins = [c(path) for path in pins]
        self.binds: list[tuple[int, int]] = []
        for path in binds:
            try:
                locked = os.statvfs(path).f_flag & _LOCKED
            except OSError:
                locked = _LOCKED
            self.binds.append((c(path), locked))
        self.root = c("/")
        self.devpts = c("devpts")
        self.pts = c("/dev/pts")
        self.options = c("newinstance,ptmxmode=0666,mode=0620")


def own_mounts(mounts: Mounts, ruleset: int, abi: int) -> None:
    """In the child, in the run's user namespace, before Landlock: a mount namespace of its
    own (`Mounts`), nothing in it propagating back; then the new /dev/pts allowed in
    `ruleset` (the person's terminals are not even there). A devpts that cannot be mounted
    leaves /dev/pts refused (no pseudo-terminal inside, nothing weaker).

    Raises:
        OSError: a step was refused (the child must not exec then).
    """
    table = _MACHINES[MACHINE]
    mount = table["refused"]["mount"]
    try:
        _sys(table["unshare"], _CLONE_NEWNS)
        _sys(mount, 0, mounts.root, 0, _MS_REC | _MS_PRIVATE, 0)
        for path in mounts.pins:
            _sys(mount, path, path, 0, _MS_BIND | _MS_REC, 0)
        for path, locked in mounts.binds:
            _sys(mount, path, path, 0, _MS_BIND | _MS_REC, 0)
            _sys(mount, 0, path, 0, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | locked, 0)
    except OSError as exc:
        raise OSError(exc.errno, f"its protected paths could not be made read-only ({exc.strerror})") from None
    try:
        _sys(mount, mounts.devpts, mounts.pts, mounts.devpts, _MS_NOSUID | _MS_NOEXEC, mounts.options)
    except OSError:
        return
    ctypes = _lib()[0]
    handled = _HANDLED_FS & ~(_REFER if abi < 2 else 0) & ~(_TRUNCATE if abi < 3 else 0)
    fd = os.open("/dev/pts", os.O_PATH | os.O_CLOEXEC)
    try:
        beneath = ctypes.create_string_buffer(
            ((READ | WRITE) & handled).to_bytes(8, "little") + fd.to_bytes(4, "little"), 12
        )
        _sys(_LANDLOCK_ADD, ruleset, _RULE_PATH_BENEATH, ctypes.addressof(beneath), 0)
    finally:
        os.close(fd)


_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx")
"""What every confined process may write besides its policy's paths (INTERFACE.md §9: the
null device and the terminal's; /dev/tty is only ever its own controlling terminal, and a
confined process has none: the janitor and each warden lead sessions of their own)."""
ALWAYS_DENIED = ("/dev/pts",)
"""Never read nor written, whatever the policy: the pseudo-terminals there are the person's
(bingo's own terminal among them), where a confined process could read keystrokes or write
what passes for bingo's words. In a mount namespace of the process's own, a devpts instance
of its own covers it and is allowed (`own_mounts`): the person's are not there at all."""


def ruleset(abi: int, rules: list[Rules], tmpdir: str, tcp_port: int | None) -> int:
    """A new Landlock ruleset (its fd) for one process: `rules`, its own `tmpdir`, the
    devices; with `tcp_port` (ABI 4+), TCP connect is refused but to that port (-1: to
    none). Signals and abstract unix sockets are scoped to the process's own domain (ABI 6+).

    Raises:
        OSError: Landlock refused it.
    """
    ctypes = _lib()[0]
    handled = _HANDLED_FS
    if abi < 2:
        handled &= ~_REFER
    if abi < 3:
        handled &= ~_TRUNCATE
    net = _CONNECT_TCP if tcp_port is not None and abi >= 4 else 0
    scoped = _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL if abi >= 6 else 0
    attr = (ctypes.c_uint64 * 3)(handled, net, scoped)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    fd = _sys(_LANDLOCK_CREATE, ctypes.addressof(attr), size, 0)
    try:
        beneath = ctypes.create_string_buffer(12)
        address = ctypes.addressof(beneath)

        def add(path_fd: int, access: int) -> None:
            beneath[:12] = (access & handled).to_bytes(8, "little") + path_fd.to_bytes(4, "little", signed=True)
            _sys(_LANDLOCK_ADD, fd, _RULE_PATH_BENEATH, address, 0)

        for each in rules:
            for path_fd, access in each.fds:
                add(path_fd, access)
        for path in (tmpdir, *_DEVICES):
            if not path:
                continue
            try:
                path_fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                add(path_fd, READ | WRITE if os.path.isdir(path) else (READ | WRITE) & _FILE_ONLY)
            finally:
                os.close(path_fd)
        if net and tcp_port is not None and tcp_port > 0:
            port = (ctypes.c_uint64 * 2)(_CONNECT_TCP, tcp_port)
            _sys(_LANDLOCK_ADD, fd, _RULE_NET_PORT, ctypes.addressof(port), 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def restrict_tcp(abi: int, port: int) -> None:
    """In the child, a Landlock layer of its own over the one `ruleset` made: TCP connect
    refused but to `port` (-1: to none). A layer stacks (Landlock intersects them), so the
    walked ruleset, made ahead, holds no port, and each process gets its proxy's. Nothing
    where Landlock has no TCP rules (ABI < 4: `Support.weaker` says so).

    Raises:
        OSError: Landlock refused it.
    """
    if abi < 4:
        return
    ctypes = _lib()[0]
    # REFER is the one right Landlock refuses in a layer that does not handle it: a layer
    # about TCP alone would make every rename or link across directories EXDEV (uv's and
    # pip's caches unpack in one directory and rename into another). So this layer handles
    # REFER and grants it beneath /: it adds nothing the walked layer does not allow.
    attr = (ctypes.c_uint64 * 3)(_REFER, _CONNECT_TCP, 0)
    fd = _sys(_LANDLOCK_CREATE, ctypes.addressof(attr), 16, 0)
    try:
        root = os.open("/", os.O_PATH | os.O_CLOEXEC)
        try:
            beneath = ctypes.create_string_buffer(_REFER.to_bytes(8, "little") + root.to_bytes(4, "little"), 12)
            _sys(_LANDLOCK_ADD, fd, _RULE_PATH_BENEATH, ctypes.addressof(beneath), 0)
        finally:
            os.close(root)
        if port > 0:
            rule = (ctypes.c_uint64 * 2)(_CONNECT_TCP, port)
            _sys(_LANDLOCK_ADD, fd, _RULE_NET_PORT, ctypes.addressof(rule), 0)
        _sys(_LANDLOCK_RESTRICT, fd, 0)
    finally:
        os.close(fd)


# --- seccomp --------------------------------------------------------------------------------

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
    table = _MACHINES[machine]
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
    ins(_RET, _ERRNO | _ENOSYS)
    labels["kill"] = len(code)
    ins(_RET, _KILL_PROCESS)
    out = bytearray()
    for index, (op, jt, jf, k) in enumerate(code):
        jumps = [labels[j] - index - 1 if isinstance(j, str) else j for j in (jt, jf)]
        assert all(0 <= j < 256 for j in jumps)
        out += op.to_bytes(2, "little") + bytes(jumps) + k.to_bytes(4, "little")
    return bytes(out)


# --- the run's network namespace ------------------------------------------------------------


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


def _in_new_namespaces(report: int) -> None:
    """In a forked child: make the namespaces, map our own ids, bring loopback up, listen on
    127.0.0.1, and send the three fds (user, net, listener) and the port back. Never returns."""
    import _socket
    import fcntl

    stage = "making a user namespace"
    try:
        uid, gid = os.geteuid(), os.getegid()
        table = _MACHINES[MACHINE]
        _sys(table["unshare"], _CLONE_NEWUSER | _CLONE_NEWNET)
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
        listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(512)
        port = listener.getsockname()[1]
        fds = [os.open("/proc/self/ns/user", os.O_RDONLY), os.open("/proc/self/ns/net", os.O_RDONLY), listener.fileno()]
        payload = b"".join(fd.to_bytes(4, sys.byteorder) for fd in fds)
        sock = _socket.socket(fileno=report)
        sock.sendmsg([b"ok %d" % port], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, payload)])
    except OSError as exc:
        try:
            os.write(report, f"no {stage}: {exc.strerror or exc}".encode())
        except OSError:
            pass
    finally:
        os._exit(0)


def make_network() -> Netns | str:
    """The run's user + network namespace with loopback up and a listener on 127.0.0.1
    inside, made in a forked child that exits once it has handed its fds over; or why not,
    in words."""
    import _socket

    refusal = userns_refusal()
    if refusal:
        return refusal
    if MACHINE not in _MACHINES:
        return f"namespaces are made only on x86-64 and arm64 here, not {MACHINE}"
    ours, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        pid = os.fork()
        if pid == 0:
            ours.close()
            _in_new_namespaces(theirs.detach())
        theirs.close()
        ours.settimeout(5.0)
        try:
            data, ancillary, _flags, _address = ours.recvmsg(256, _socket.CMSG_SPACE(3 * 4))
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
    if not text.startswith("ok ") or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        reason = text.removeprefix("no ")
        if "making a user namespace" in reason or "mapping its user" in reason or "bringing its loopback up" in reason:
            return f"a user namespace could not be used ({reason}); unprivileged user namespaces are refused here"
        return f"the network namespace could not be made ({reason})"
    return Netns(fds[0], fds[1], fds[2], int(text[3:]))


def _listening_in(netns: Netns, report: int) -> None:
    """In a forked child: join the run's namespaces, listen on 127.0.0.1 there, and send the
    listener's fd and its port back. Never returns."""
    import _socket

    try:
        table = _MACHINES[MACHINE]
        _sys(table["setns"], netns.user, _CLONE_NEWUSER)
        _sys(table["setns"], netns.net, _CLONE_NEWNET)
        listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(512)
        port = listener.getsockname()[1]
        sock = _socket.socket(fileno=report)
        sock.sendmsg(
            [b"ok %d" % port], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, listener.fileno().to_bytes(4, sys.byteorder))]
        )
    except OSError as exc:
        try:
            os.write(report, f"no listener: {exc.strerror or exc}".encode())
        except OSError:
            pass
    finally:
        os._exit(0)


def another_listener(netns: Netns) -> tuple[int, int] | str:
    """One more TCP listener on 127.0.0.1 inside the run's namespaces (made in a forked child
    that joins them), and its port: a proxy of its own for each confined process, so that each
    request is decided for who made it (ADR-0031); or why not, in words."""
    import _socket

    ours, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        pid = os.fork()
        if pid == 0:
            ours.close()
            _listening_in(netns, theirs.detach())
        theirs.close()
        ours.settimeout(5.0)
        try:
            data, ancillary, _flags, _address = ours.recvmsg(256, _socket.CMSG_SPACE(4))
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
    if not text.startswith("ok ") or len(fds) != 1:
        for fd in fds:
            os.close(fd)
        return f"another listener could not be made in the network namespace ({text.removeprefix('no ')})"
    return fds[0], int(text[3:])


# --- in the forked child, just before exec -----------------------------------------------------


class Plan:
    """What `enter` does in one child: all made beforehand, in the janitor."""

    __slots__ = ("abi", "filter", "last_cap", "mounts", "netns", "nofile", "port", "ruleset")

    def __init__(
        self,
        ruleset: int,
        netns: Netns | None,
        program: Any,
        nofile: tuple[int, int],
        last_cap: int,
        abi: int,
        port: int | None,
        mounts: Mounts | None = None,
    ) -> None:
        self.ruleset = ruleset
        self.mounts = mounts
        """The process's own mount namespace (only in the run's user namespace: None
        without one, where the walk keeps the protected paths)."""
        self.abi = abi
        self.port = port
        """The proxy's port, the one TCP connect may reach (-1: none); None: not yet known
        (a process parked ahead gets its layer with its order, `restrict_tcp`)."""
        self.last_cap = last_cap
        """The highest capability this kernel knows (/proc/sys/kernel/cap_last_cap)."""
        self.netns = netns
        self.filter = program
        self.nofile = nofile
        """The limit on open files the janitor started with (it raised its own)."""


def seccomp_filter(machine: str) -> Any:
    """`struct sock_fprog` for `seccomp_program`, kept alive by the caller."""
    ctypes = _lib()[0]
    program = seccomp_program(machine)
    buffer = ctypes.create_string_buffer(program, len(program))

    class _Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = _Fprog(len(program) // 8, ctypes.addressof(buffer))
    fprog._keep = buffer  # type: ignore[attr-defined]
    return fprog


def _drop_capabilities(last: int, bounding: bool) -> None:
    """No capability survives into exec: securebits locked so that root (in the namespace,
    or bingo run as root) gains none back at exec, the ambient set cleared, the
    effective/permitted/inheritable sets zeroed, and (`bounding`: outside a namespace of our
    own, where a process may be the machine's root) the bounding set emptied too. Inside
    the run's user namespace the bounding set is left: what it holds could only be regained
    at exec, which no_new_privs and the locked securebits refuse, and emptying it is 41
    system calls on every spawn's path. A step refused for want of CAP_SETPCAP (an
    unprivileged process without a namespace has nothing to drop) is skipped."""
    ctypes = _lib()[0]
    try:
        _prctl(_PR_SET_SECUREBITS, _SECUREBITS)
    except OSError:
        pass
    if bounding:
        for cap in range(last + 1):
            try:
                _prctl(_PR_CAPBSET_DROP, cap)
            except OSError:
                break
    try:
        _prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL)
    except OSError:
        pass
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()
    _sys(_MACHINES[MACHINE]["capset"], ctypes.addressof(header), ctypes.addressof(data))


def enter(plan: Plan, parent: int) -> None:
    """In the forked child, just before exec: join the run's namespaces (and make a mount
    namespace of its own: `own_mounts`), no new privileges, Landlock, no capabilities,
    seccomp; then die with `parent` again (joining a user namespace clears the
    parent-death signal).

    Raises:
        OSError: a step was refused (the child must not exec then).
    """
    table = _MACHINES[MACHINE]
    if plan.netns is not None:
        _sys(table["setns"], plan.netns.user, _CLONE_NEWUSER)
        _sys(table["setns"], plan.netns.net, _CLONE_NEWNET)
        if plan.mounts is not None:
            own_mounts(plan.mounts, plan.ruleset, plan.abi)
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)
    _sys(_LANDLOCK_RESTRICT, plan.ruleset, 0)
    if plan.port is not None:
        restrict_tcp(plan.abi, plan.port)
    import resource

    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, plan.nofile)
    except (OSError, ValueError):
        pass
    _drop_capabilities(plan.last_cap, bounding=plan.netns is None)
    ctypes = _lib()[0]
    _prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(plan.filter))
    _prctl(_PR_SET_PDEATHSIG, 9)
    if os.getppid() != parent:
        os._exit(1)


def remove_tree(path: str) -> None:
    """Remove a process's TMPDIR and all in it, never following a link it planted."""
    try:
        for top, dirs, files, top_fd in os.fwalk(path, topdown=False, follow_symlinks=False):
            for name in files:
                try:
                    os.unlink(name, dir_fd=top_fd)
                except OSError:
                    pass
            for name in dirs:
                try:
                    os.rmdir(name, dir_fd=top_fd)
                except OSError:
                    try:
                        os.unlink(name, dir_fd=top_fd)  # a link to a directory
                    except OSError:
                        pass
            del top
        os.rmdir(path)
    except OSError:
        pass
