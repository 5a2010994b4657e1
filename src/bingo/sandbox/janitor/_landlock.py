"""Landlock for one confined process: "everything but X" as allow-only rules (ADR-0030).

Owns, in the janitor before any fork, the walk that turns "read everything but X" into
Landlock's allow-only rules (`Rules`, rebuilt when a directory on the walk changes: `fresh`),
the protected paths' read-only bind mounts in a mount namespace of the process's own
(`Mounts`, made in the child by `own_mounts`), and a fresh ruleset for one process (`ruleset`:
the rules, its own TMPDIR, the devices); and, in the child, the layer that bounds its TCP to
the proxy's port (`restrict_tcp`). It does not enforce a ruleset (`_confine.enter` does).
It imports only the standard library (the janitor imports nothing of bingo's, ADR-0013).
"""

from __future__ import annotations

import os

from ._syscall import CLONE_NEWNS, LANDLOCK_ADD, LANDLOCK_CREATE, LANDLOCK_RESTRICT, MACHINE, MACHINES, lib, syscall

TYPE_CHECKING = False  # not typing's: the janitor imports nothing it can do without
if TYPE_CHECKING:
    from typing import Any

__all__ = ["ALWAYS_DENIED", "READ", "WRITE", "Mounts", "Rules", "fresh", "own_mounts", "restrict_tcp", "ruleset"]

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
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_LOCKED = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
"""The flags a bind mount keeps from its source in a user namespace (the kernel locks them:
a remount that drops one is refused); statvfs's ST_ values are the same bits."""

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
        ctypes = lib()[0]
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
    table = MACHINES[MACHINE]
    mount = table["refused"]["mount"]
    try:
        syscall(table["unshare"], CLONE_NEWNS)
        syscall(mount, 0, mounts.root, 0, _MS_REC | _MS_PRIVATE, 0)
        for path in mounts.pins:
            syscall(mount, path, path, 0, _MS_BIND | _MS_REC, 0)
        for path, locked in mounts.binds:
            syscall(mount, path, path, 0, _MS_BIND | _MS_REC, 0)
            syscall(mount, 0, path, 0, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | locked, 0)
    except OSError as exc:
        raise OSError(exc.errno, f"its protected paths could not be made read-only ({exc.strerror})") from None
    try:
        syscall(mount, mounts.devpts, mounts.pts, mounts.devpts, _MS_NOSUID | _MS_NOEXEC, mounts.options)
    except OSError:
        return
    ctypes = lib()[0]
    handled = _HANDLED_FS & ~(_REFER if abi < 2 else 0) & ~(_TRUNCATE if abi < 3 else 0)
    fd = os.open("/dev/pts", os.O_PATH | os.O_CLOEXEC)
    try:
        beneath = ctypes.create_string_buffer(
            ((READ | WRITE) & handled).to_bytes(8, "little") + fd.to_bytes(4, "little"), 12
        )
        syscall(LANDLOCK_ADD, ruleset, _RULE_PATH_BENEATH, ctypes.addressof(beneath), 0)
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
    ctypes = lib()[0]
    handled = _HANDLED_FS
    if abi < 2:
        handled &= ~_REFER
    if abi < 3:
        handled &= ~_TRUNCATE
    net = _CONNECT_TCP if tcp_port is not None and abi >= 4 else 0
    scoped = _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL if abi >= 6 else 0
    attr = (ctypes.c_uint64 * 3)(handled, net, scoped)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    fd = syscall(LANDLOCK_CREATE, ctypes.addressof(attr), size, 0)
    try:
        beneath = ctypes.create_string_buffer(12)
        address = ctypes.addressof(beneath)

        def add(path_fd: int, access: int) -> None:
            beneath[:12] = (access & handled).to_bytes(8, "little") + path_fd.to_bytes(4, "little", signed=True)
            syscall(LANDLOCK_ADD, fd, _RULE_PATH_BENEATH, address, 0)

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
            syscall(LANDLOCK_ADD, fd, _RULE_NET_PORT, ctypes.addressof(port), 0)
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
    ctypes = lib()[0]
    # REFER is the one right Landlock refuses in a layer that does not handle it: a layer
    # about TCP alone would make every rename or link across directories EXDEV (uv's and
    # pip's caches unpack in one directory and rename into another). So this layer handles
    # REFER and grants it beneath /: it adds nothing the walked layer does not allow.
    attr = (ctypes.c_uint64 * 3)(_REFER, _CONNECT_TCP, 0)
    fd = syscall(LANDLOCK_CREATE, ctypes.addressof(attr), 16, 0)
    try:
        root = os.open("/", os.O_PATH | os.O_CLOEXEC)
        try:
            beneath = ctypes.create_string_buffer(_REFER.to_bytes(8, "little") + root.to_bytes(4, "little"), 12)
            syscall(LANDLOCK_ADD, fd, _RULE_PATH_BENEATH, ctypes.addressof(beneath), 0)
        finally:
            os.close(root)
        if port > 0:
            rule = (ctypes.c_uint64 * 2)(_CONNECT_TCP, port)
            syscall(LANDLOCK_ADD, fd, _RULE_NET_PORT, ctypes.addressof(rule), 0)
        syscall(LANDLOCK_RESTRICT, fd, 0)
    finally:
        os.close(fd)
