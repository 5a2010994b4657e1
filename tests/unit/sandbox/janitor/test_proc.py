"""What /proc says about processes, asked of this test's own children."""

from __future__ import annotations

import os
import subprocess
import sys

from bingo.sandbox.janitor import proc

_SLEEPER = "import time; time.sleep(60)"
_SAYS_UP = "import time; print('up', flush=True); time.sleep(60)"
"""A sleeper whose command line can surely be read once it says so (just after an exec it
cannot, for a moment)."""


def test_a_child_is_alive_with_its_parent_and_found_by_its_command_line() -> None:
    marker = f"sleeper-{os.getpid()}"
    with subprocess.Popen([sys.executable, "-c", _SAYS_UP, marker], stdout=subprocess.PIPE) as child:
        try:
            assert child.stdout is not None and child.stdout.readline() == b"up\n"
            assert proc.alive(child.pid)
            assert proc.parent(child.pid) == os.getpid()
            assert child.pid in proc.children(os.getpid())
            assert proc.find(lambda argv: marker in argv) == [child.pid]
            assert proc.cmdline(child.pid) == [sys.executable, "-c", _SAYS_UP, marker]
        finally:
            child.kill()
            child.wait(5)
    assert not proc.alive(child.pid)
    assert proc.find(lambda argv: marker in argv) == []


def test_a_zombie_has_ended_but_its_group_is_empty_only_once_it_has() -> None:
    child = subprocess.Popen([sys.executable, "-c", _SLEEPER], start_new_session=True)
    try:
        assert proc.group_has_living(child.pid)
        child.kill()
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # ended, not yet reaped
        assert proc.parent(child.pid) == os.getpid()  # still listed, as a zombie
        assert not proc.alive(child.pid)
        assert child.pid not in proc.children(os.getpid())
        assert not proc.group_has_living(child.pid)
    finally:
        child.kill()
        child.wait(5)


def test_no_such_process_is_neither_alive_nor_anyones_child() -> None:
    with subprocess.Popen([sys.executable, "-c", "pass"]) as child:
        child.wait(5)
    assert not proc.alive(child.pid)
    assert proc.parent(child.pid) is None
    assert proc.cmdline(child.pid) is None
