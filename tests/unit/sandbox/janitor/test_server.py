"""The janitor's own process: what it imports, and its one call into libc."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from bingo.sandbox.janitor import _client


def _like_the_janitor(script: str) -> list[str]:
    """What `script` prints in an interpreter started as the janitor is (`-I -S`, this
    package importable as `janitor` and nothing of bingo's)."""
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", _client._ON_PATH + textwrap.dedent(script)],
        capture_output=True,
        text=True,
        check=True,
        timeout=5,
    )
    return done.stdout.split()


def test_the_janitor_imports_nothing_of_bingo_nor_the_costly_modules() -> None:
    # Its start is on the first plugin spawn's path (ADR-0013): no bingo package, no
    # `signal`/`socket`/`ctypes` (enums, regexes), no typing.
    imported = _like_the_janitor("""
        from janitor import _server
        print(*sorted(name for name in sys.modules if name.startswith(("bingo", "janitor", "msgspec"))))
        print(*(name in sys.modules for name in ("signal", "socket", "ctypes", "typing", "json")))
    """)
    assert (
        imported == ["janitor", "janitor._codec", "janitor._prctl", "janitor._server", "janitor.proc"] + ["False"] * 5
    )


def test_the_janitor_reaches_prctl_without_the_ctypes_package() -> None:
    # The janitor calls libc's prctl through `_ctypes` (the `ctypes` package would be a
    # quarter of its start): its calls must reach the kernel (PR_GET_DUMPABLE answers in
    # the return value: 1, then 0 once PR_SET_DUMPABLE cleared it), and `ctypes` stay
    # unimported.
    said = _like_the_janitor("""
        from janitor import _prctl
        assert _prctl.prctl is not None
        before = _prctl.prctl(3, 0, 0, 0, 0)
        _prctl.prctl_set(4, 0)
        print(before, _prctl.prctl(3, 0, 0, 0, 0), "ctypes" in sys.modules)
    """)
    assert said == ["1", "0", "False"]
