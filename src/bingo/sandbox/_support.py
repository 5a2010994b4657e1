"""What this machine's kernel offers the sandbox, as a value (`probe()`).

Owns the words: what is missing and what is weaker because of it, each something a person
can act on. The reading itself (a system call, a few files in /proc) is
`janitor/_syscall.examine`, shared with the janitor's process.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

__all__ = ["Support", "probe"]


@dataclass(frozen=True, slots=True)
class Support:
    """What the kernel offers the sandbox here.

    `confines`: a process can be confined at all (Landlock for files and seccomp); without
    it bingo runs unconfined and says so (INTERFACE.md section 9). `missing`: each thing
    missing, in words a person can act on. `weaker`: what is weaker than the full sandbox
    because of it (empty when nothing is)."""

    landlock: int
    """Landlock's ABI version (0: none)."""
    userns: bool
    """Whether unprivileged user + network namespaces look allowed (the network namespace is
    made, and proved, at the first `proxy_listener()`)."""
    seccomp: bool
    missing: tuple[str, ...]
    weaker: tuple[str, ...]

    @property
    def confines(self) -> bool:
        return self.landlock >= 1 and self.seccomp

    @property
    def mechanism(self) -> str:
        """One line naming what confines a process here (for `/sandbox`)."""
        if not self.confines:
            return "none: " + "; ".join(self.missing)
        parts = [f"Landlock ABI {self.landlock}", "seccomp"]
        parts.append(
            "a network namespace"
            if self.userns
            else "Landlock TCP rules"
            if self.landlock >= 4
            else "no network confinement"
        )
        return " + ".join(parts)


def weaknesses(landlock: int, userns: bool) -> tuple[str, ...]:
    """What the sandbox cannot hold with this Landlock ABI and these namespaces, in words."""
    weaker: list[str] = []
    if not userns:
        weaker.append(
            "without a user namespace, protected paths are kept by closing each directory above one to new "
            "entries: no new file or directory at the project's root (touch new.py, npm install) nor in .git/ "
            "(git add and git commit fail), and no pseudo-terminal inside"
        )
        if landlock >= 4:
            weaker.append(
                "without a network namespace, TCP is bounded by Landlock to the proxy's port: a confined "
                "process can reach that port on any address, not only the proxy's"
            )
        else:
            weaker.append(
                f"without a network namespace and with Landlock ABI {landlock} (TCP rules need Linux 6.7+), "
                "a confined process can open TCP connections anywhere directly (UDP, raw and unix sockets "
                "stay refused)"
            )
    if landlock and landlock < 6:
        weaker.append(
            f"Landlock ABI {landlock} cannot scope signals (needs Linux 6.12+): a confined process can "
            "signal your other processes"
        )
    if landlock and landlock < 3:
        weaker.append(f"Landlock ABI {landlock} cannot refuse truncating a file (needs Linux 6.2+)")
    return tuple(weaker)


def probe() -> Support:
    """What this kernel offers (Landlock's ABI, user + network namespaces, seccomp), read
    without changing anything; about two milliseconds the first time (it loads `ctypes`).
    Whether a user namespace can really be made is known once `proxy_listener()` tried:
    if it failed, the reason is among `missing` and the degraded path among `weaker`."""
    from .janitor._syscall import examine

    found = examine()
    # Said by `_run` once its `proxy_listener` found out; if it was never imported, no namespace
    # was tried (its import is the janitor client's, which the probe does not need).
    run = sys.modules.get(f"{__package__}._run")
    refused: str = getattr(run, "refused", "") if run is not None else ""
    userns, missing = found.userns, list(found.missing)
    if userns and refused:
        # Allowed by the kernel's settings, refused when made (a container's seccomp
        # profile, a security module): said from then on.
        userns = False
        missing.append(refused)
    return Support(
        landlock=found.landlock,
        userns=userns,
        seccomp=found.seccomp,
        missing=tuple(missing),
        weaker=weaknesses(found.landlock, userns) if found.landlock and found.seccomp else (),
    )
