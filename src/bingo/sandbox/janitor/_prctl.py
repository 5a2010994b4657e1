"""libc's `prctl`, for the janitor and its wardens: the parent-death signal and the child
subreaper (ADR-0013).

Owns the one call into libc the janitor makes, and nothing else. It is reached through
`_ctypes` itself: the `ctypes` package around it (its types, its struct and endian modules)
would be a quarter of the janitor's start, which a run's first plugin spawn waits on. These
few lines are what `ctypes.CDLL(None).prctl` builds; where `_ctypes` differs, `ctypes` does
it. They subclass `_ctypes`' private classes, which its stubs do not allow, so pyright
ignores this module alone (pyproject.toml); the rest of the janitor is checked.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing's: the janitor imports nothing it can do without
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["PR_SET_CHILD_SUBREAPER", "PR_SET_PDEATHSIG", "prctl", "prctl_set"]

PR_SET_PDEATHSIG = 1
"""The signal this process gets when the thread that created it ends."""
PR_SET_CHILD_SUBREAPER = 36
"""Orphans below this process are re-parented to it, not to init."""


def _libc_prctl() -> Callable[[int, int, int, int, int], int] | None:
    """libc's `prctl`; None where there is no such function."""
    try:
        import _ctypes

        class _Int(_ctypes._SimpleCData):  # ctypes.c_int
            _type_ = "i"

        class _Function(_ctypes.CFuncPtr):  # ctypes.CDLL's function pointers
            _flags_ = _ctypes.FUNCFLAG_CDECL
            _restype_ = _Int

        class _Process:  # what a function pointer is looked up in: this process's symbols
            _handle = _ctypes.dlopen(None, os.RTLD_LOCAL)

        return _Function(("prctl", _Process()))
    except (ImportError, AttributeError, TypeError):
        pass
    try:
        import ctypes

        return ctypes.CDLL(None).prctl
    except (ImportError, OSError, AttributeError):
        return None


prctl = _libc_prctl()
"""libc's `prctl(option, arg2, arg3, arg4, arg5)`, or None where there is none."""


def prctl_set(option: int, value: int) -> None:
    """`prctl(option, value)`, where there is a `prctl` (elsewhere nothing is done)."""
    if prctl is not None:
        prctl(option, value, 0, 0, 0)
