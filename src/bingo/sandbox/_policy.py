"""The one value that says what a confined process may reach.

It is built from the settings (who may widen what: INTERFACE.md section 9) and applied by the
mechanism before the process's `exec`; neither end knows how the other works.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["Policy"]


@dataclass(frozen=True, slots=True)
class Policy:
    """What one confined process (and everything it forks) may reach.

    Paths are absolute and resolved. Reading is allowed everywhere except `denied`; writing
    only beneath `writable`, except beneath `protected` (which lies inside `writable` and stays
    readable). The network is the proxy at `proxy` (host, port) and nothing else; None: no
    network at all.
    """

    denied: tuple[Path, ...]
    writable: tuple[Path, ...]
    protected: tuple[Path, ...]
    proxy: tuple[str, int] | None
