"""The sandbox: what a process bingo starts may reach (INTERFACE.md section 9; ADR-0030).

This package sits between the kernel and the packages that start processes (tools, bridge):
it may import `wire` and `kernel`; `tools`, `bridge` and above may import it.
"""

from __future__ import annotations

from ._policy import Policy

__all__ = ["Policy"]
