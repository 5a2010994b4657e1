"""Plugin packages: `bingo plugin add|list|remove` (INTERFACE.md §12; ADR-0048).

Sits above `bridge`, `bring` and `surfaces`, imported only by `cli`. It fetches a `SOURCE` (a
directory, a git repository; `_fetch.py`), shows what the package brings (read by
`bridge._package`, which also pins it), asks, installs into a layer's `plugins/` and records
the source and the content hash; discovery refuses a package whose bytes are not as pinned.
"""

from __future__ import annotations

from ._cli import run_plugin

__all__ = ["run_plugin"]
