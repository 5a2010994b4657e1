"""What the tests of the files bingo opens and writes (issue 23 items 4–7) need beyond the
Sandbox: a launcher that becomes bingo in the same process (so a repository's links can be
planted at the temporary names that process would have used, and a umask and an address
space limit set for it), and a run that reports bingo's peak resident memory (`os.wait4`'s
`ru_maxrss`).

Run as a script, this file is the launcher: `python _hostile_files.py SPEC COMMAND ARGS…`
where SPEC is JSON `{"umask": "077", "links": [[directory, name with {pid}, target]],
"pids": 64, "address_space": bytes, "report": path}`; it plants each link for every pid
within `pids` of its own, sets what it is asked to, then execs COMMAND: the PID stays the
same, so bingo is one of the processes the links were planted for. With `report`, it forks
first and the child does all that, while the launcher waits for it with `os.wait4` and
writes its `ru_maxrss` (KiB) to `report`: the kernel counts the memory a process had before
its exec into its peak, and a child forked straight from pytest would start with pytest's.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # run as a script (the launcher), this file imports nothing of the tests
    from tests.e2e._bingo import Sandbox

HERE = str(Path(__file__).resolve())

ADDRESS_SPACE = 3 << 30
"""The most address space a measured bingo may take: far above what any test allows its
resident memory, but a bound, so that a regression (a file read whole) fails the test
instead of taking the machine's memory."""


def launcher(spec: dict[str, object]) -> list[str]:
    """The argv prefix that runs the launcher with `spec`; append bingo's argv to it."""
    return [sys.executable, HERE, json.dumps(spec)]


@dataclass(frozen=True)
class Measured:
    returncode: int
    stdout: str
    stderr: str
    peak_mb: float
    """bingo's peak resident memory, from the kernel's accounting at its exit."""


def measured(box: Sandbox, *args: str, spec: dict[str, object] | None = None, timeout: float = 60) -> Measured:
    """Run bingo to completion (killed past `timeout`, its whole process group) and report
    its peak resident memory (`ru_maxrss`, taken by the launcher's `os.wait4`); stdout and
    stderr go through files, so nothing blocks."""
    from tests.e2e._bingo import BINGO

    report = box.root / "peak-rss"
    argv = launcher({"address_space": ADDRESS_SPACE, "report": str(report), **(spec or {})}) + [BINGO, *args]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            argv, cwd=box.project, env=box.env, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True
        )
        try:
            returncode = process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # bingo and everything it started
            returncode = process.wait(5)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    peak = int(report.read_text()) / 1024 if report.exists() else float("nan")  # ru_maxrss: KiB on Linux
    return Measured(returncode=returncode, stdout=stdout, stderr=stderr, peak_mb=peak)


def _launch(spec: dict[str, object], argv: list[str]) -> None:
    report = spec.get("report")
    if report is not None:
        child = os.fork()
        if child:
            _, status, usage = os.wait4(child, 0)
            Path(str(report)).write_text(str(usage.ru_maxrss))
            code = os.waitstatus_to_exitcode(status)
            if code < 0:
                os.kill(os.getpid(), -code)  # die as bingo died, so the test sees its signal
            os._exit(code)
    pid = os.getpid()
    around = int(str(spec.get("pids", 64)))
    links = spec.get("links", [])
    assert isinstance(links, list)
    for entry in links:
        directory, name, target = (str(part) for part in entry)
        for other in range(max(1, pid - around), pid + around + 1):
            try:
                os.symlink(target, os.path.join(directory, name.format(pid=other)))
            except FileExistsError:
                pass
    if "umask" in spec:
        os.umask(int(str(spec["umask"]), 8))
    if "address_space" in spec:
        limit = int(str(spec["address_space"]))
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    os.execv(argv[0], argv)


if __name__ == "__main__":
    _launch(json.loads(sys.argv[1]), sys.argv[2:])
