"""The `bash` tool: one shell command, its merged output bounded, its process group reaped.

Owns the process's life: `/bin/bash -c` in its own session (so the whole group can be
signalled), stdin from /dev/null, stdout and stderr merged into one pipe, a timeout, and a
cleanup that runs however the call ends (done, timed out, cancelled) and leaves no process
behind: SIGTERM to the group, a short grace, SIGKILL to the group. It also owns the bound on
output (head and tail kept) and the live progress line. It does not decide whether a command
may run: the gate does, before the call.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import logging
import os
import re
import signal
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Protocol

import msgspec

from ..kernel.interfaces import ToolCall
from ..sandbox import Policy, Sandbox
from ..wire import TextPart, ToolOutput, ToolTraits
from ._common import BuiltinTool, Input, error_output, parse_input, text_output
from ._git import environment as git_environment
from ._specs import spec

__all__ = ["BashTool"]

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 120.0
"""Seconds a command may run when the model does not say."""

MAX_TIMEOUT = 600.0
"""The longest a command may run: the default deadline of a tool call."""

HEAD_CHARS = 15_000
TAIL_CHARS = 15_000
"""Output kept: the first and the last characters; what lies between is cut and counted."""

PROGRESS_INTERVAL = 0.1
"""Seconds between progress reports (at most ~10 a second reach the person)."""

DRAIN_GRACE = 0.5
"""Seconds output is still read after bash exits, while a background child holds the pipe."""

TERM_GRACE = 2.0
"""Seconds the group has to exit after SIGTERM before it gets SIGKILL."""

REAP_DEADLINE = 5.0
"""Seconds to wait for bash itself to be reaped, and its pipe to close, after SIGKILL."""

_READ_CHUNK = 65_536
_LINE_BREAK = re.compile(r"[\r\n]")
_MAX_PROGRESS = 200
"""Characters of the last line shown as progress."""


class BashInput(Input, frozen=True):
    """Input of the bash tool."""

    command: Annotated[str, msgspec.Meta(description="The command line, run by `bash -c`.")]
    timeout: Annotated[
        float,
        msgspec.Meta(
            gt=0,
            le=MAX_TIMEOUT,
            description=(
                f"Seconds before the command is killed (default {DEFAULT_TIMEOUT:g}, at most {MAX_TIMEOUT:g})."
            ),
        ),
    ] = DEFAULT_TIMEOUT
    outside_sandbox: Annotated[
        bool,
        msgspec.Meta(
            description=(
                "Run outside bingo's sandbox, with everything the person can reach. The person is "
                "always asked (no rule allows it), and where nobody can be asked it is refused: "
                "use it only when the sandbox is why the command cannot work, and give `reason`."
            )
        ),
    ] = False
    reason: Annotated[
        str | None, msgspec.Meta(description="Why the command must run outside the sandbox (shown to the person).")
    ] = None


class _Capture:
    """Merged output as it arrives: the head and the tail kept, the middle counted, and the
    last non-empty line remembered for progress."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._head: list[str] = []
        self._head_len = 0
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self._partial = ""
        self.total = 0
        self.last_line = ""

    def feed(self, data: bytes, *, final: bool = False) -> None:
        text = self._decoder.decode(data, final)
        if not text:
            return
        self.total += len(text)
        self._note_line(text)
        room = HEAD_CHARS - self._head_len
        if room > 0:
            self._head.append(text[:room])
            self._head_len += len(text[:room])
            text = text[room:]
        if text:
            self._tail.append(text)
            self._tail_len += len(text)
            # Drop whole chunks from the front while the rest still fills the tail.
            while self._tail_len - len(self._tail[0]) >= TAIL_CHARS:
                self._tail_len -= len(self._tail.popleft())

    def _note_line(self, text: str) -> None:
        # A progress bar rewrites its line with "\r": the part after the last break is the
        # line as the person would see it now.
        segments = _LINE_BREAK.split(self._partial + text)
        self._partial = segments[-1][-_MAX_PROGRESS:]
        for segment in reversed(segments):
            if segment.strip():
                self.last_line = segment.strip()[:_MAX_PROGRESS]
                return

    def text(self) -> str:
        head = "".join(self._head)
        tail = "".join(self._tail)[-TAIL_CHARS:]
        cut = self.total - len(head) - len(tail)
        if cut <= 0:
            return head + tail
        return f"{head}\n[… {cut} characters of output cut …]\n{tail}"


class BashTool(BuiltinTool):
    """Runs a shell command."""

    _spec = spec("bash")  # as data (`_specs.py`), held equal to BashInput's schema by a test
    _traits = ToolTraits(trusted=False, read_only=False, concurrency_safe=False, interrupt="cancel")

    def __init__(
        self, policy: Policy | None = None, env: dict[str, str] | None = None, *, sandbox: Sandbox | None = None
    ) -> None:
        self.policy = policy
        """What the command is confined to (None: unconfined, started directly)."""
        self.env = env
        """The confined command's environment (None: bingo's own); the direct path inherits
        bingo's."""
        self.sandbox = sandbox
        """The run's sandbox (ADR-0031): when given, it says each call's policy and
        environment (none while it is not in force), and `policy` and `env` are not read."""

    def policy_for(self, call: ToolCall) -> Policy | None:
        """The policy `call`'s command runs under: `policy`, unless a subclass says otherwise."""
        del call
        return self.policy

    async def call(self, call: ToolCall) -> ToolOutput:
        args = parse_input(BashInput, call.input, "bash")
        if isinstance(args, ToolOutput):
            return args
        policy, env = await self._confinement(call, args)
        # Allowed by a rule, nobody saw this command: unconfined, git runs none of the
        # repository's own programs (tools/_git.py, ADR-0018). Confined, what git would run
        # is bounded as the command is, so nothing is listed (a `git config` child per call).
        git = await git_environment(call.cwd) if call.allowed_by is not None and policy is None else {}
        try:
            if policy is None:
                proc: _Process = await asyncio.create_subprocess_exec(
                    "/bin/bash",
                    "-c",
                    args.command,
                    cwd=call.cwd,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.STDOUT,
                    start_new_session=True,
                    env={**os.environ, **git} if git else None,
                )
            else:
                proc = await _Confined.start(args.command, Path(call.cwd), {**(env or os.environ), **git}, policy)
        except FileNotFoundError as exc:
            return error_output(
                f"bash: cannot start in {call.cwd}: {exc.strerror or exc}. Check that the working directory exists."
            )
        except OSError as exc:
            if policy is not None:
                return error_output(f"bash: cannot start the command in the sandbox: {exc.strerror or exc}")
            return error_output(
                f"bash: cannot start in {call.cwd}: {exc.strerror or exc}. Check that the working directory exists."
            )
        capture = _Capture()
        try:
            timed_out = await _run(proc, capture, call.progress, args.timeout)
        finally:
            # Runs on success, timeout and cancellation alike; a cancellation goes on after it.
            await _reap(proc, capture)
        answer = _answer(capture, proc.returncode, args.timeout if timed_out else None)
        if policy is not None and self.sandbox is not None and answer.is_error:  # the model's own call
            return error_output(f"{_text(answer)}\n{SANDBOXED}")
        return answer

    async def _confinement(self, call: ToolCall, args: BashInput) -> tuple[Policy | None, dict[str, str] | None]:
        """The policy and environment `call`'s command runs under: the run's sandbox's when
        it has one (none for a call outside it, which the gate asked the person about),
        else `policy_for` and `env`."""
        if self.sandbox is None:
            return self.policy_for(call), self.env
        if args.outside_sandbox:
            return None, None
        confined = await self.sandbox.for_bash()
        return (confined.policy, confined.env) if confined is not None else (None, None)


SANDBOXED = (
    "[this command ran in bingo's sandbox, which refuses: writing outside the project and its TMPDIR, "
    "to the project's .bingo/, .mcp.json, .git/hooks and .git/config (and, where the kernel refuses user "
    "namespaces, a new file or directory at the project's root or in .git/, so git commit fails there); "
    "reading secrets (~/.ssh, ~/.aws, ~/.bingo and the like), any network but HTTP(S) through bingo's "
    "proxy to granted hosts, and signals to processes outside it; if that is why it failed, tell the "
    "person what it needs (a host for sandbox.network.allow, a path for sandbox.write), or retry with "
    "outsideSandbox: true and a reason, which the person is asked about]"
)
"""The line a sandboxed command's failure gets, so the model can explain or ask (§9)."""


def _text(output: ToolOutput) -> str:
    return "".join(part.text for part in output.parts if isinstance(part, TextPart))


class _Process(Protocol):
    """What the command's life needs of its process: asyncio's, or a confined one's."""

    @property
    def pid(self) -> int: ...

    @property
    def stdout(self) -> asyncio.StreamReader | None: ...

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...


class _Confined:
    """The command started confined by the run's janitor (ADR-0030), forked straight from it
    (no warden): bash leads its session and process group (`pid`), stdin is /dev/null,
    stdout and stderr one pipe, as on the direct path; the janitor reports its exit."""

    def __init__(self, pid: int, stdout: asyncio.StreamReader, ended: asyncio.Future[int | None]) -> None:
        self.pid = pid
        self.stdout = stdout
        self._ended = ended

    @classmethod
    async def start(cls, command: str, cwd: Path, env: dict[str, str], policy: Policy) -> _Confined:
        """
        Raises:
            OSError: it cannot be started (FileNotFoundError: `cwd` is missing) or confined.
        """
        from ..sandbox import spawn

        if not cwd.is_dir():
            raise FileNotFoundError(2, "No such file or directory", str(cwd))
        # No warden: the command leads its own session as on the direct path, and `_reap`
        # ends its group; the janitor reports its exit and holds what escapes the group.
        spawned = await spawn(
            "/bin/bash",
            ["/bin/bash", "-c", command],
            env,
            cwd,
            grace=TERM_GRACE / 2,
            policy=policy,
            merged=True,
            warden=False,
        )
        loop = asyncio.get_running_loop()
        pipe = os.fdopen(spawned.stdout, "rb", buffering=0)
        try:
            stdout = asyncio.StreamReader(loop=loop)
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdout, loop=loop), pipe)
        except BaseException:
            pipe.close()
            with contextlib.suppress(OSError):
                os.killpg(spawned.pid, signal.SIGKILL)
            raise
        return cls(spawned.pid, stdout, spawned.ended)

    @property
    def returncode(self) -> int | None:
        if not self._ended.done():
            return None
        # None: the janitor was lost; the command was killed with it.
        code = self._ended.result()
        return -signal.SIGKILL if code is None else code

    async def wait(self) -> int:
        await asyncio.shield(self._ended)
        code = self.returncode
        assert code is not None
        return code


async def _pump(stream: asyncio.StreamReader, capture: _Capture) -> None:
    while chunk := await stream.read(_READ_CHUNK):
        capture.feed(chunk)


async def _run(
    proc: _Process,
    capture: _Capture,
    progress: Callable[[str], None],
    timeout: float,
) -> bool:
    """Read the output until the pipe closes and bash has exited; True when the timeout came
    first. Progress is sampled every PROGRESS_INTERVAL, which is the throttle."""
    assert proc.stdout is not None  # stdout=PIPE
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    drain_until: float | None = None
    reported = ""
    async with asyncio.TaskGroup() as group:
        pump = group.create_task(_pump(proc.stdout, capture))
        while not pump.done():
            now = loop.time()
            if now >= deadline:
                pump.cancel()
                return True
            # `returncode` is polled, not awaited: in 3.11 a `wait()` begun before the exit
            # resolves only once every pipe is closed, and a background child may hold it.
            if proc.returncode is not None and drain_until is None:
                drain_until = now + DRAIN_GRACE
            if drain_until is not None and now >= drain_until:
                pump.cancel()  # the cleanup kills the child and reads what is left
                break
            wait = min(PROGRESS_INTERVAL, deadline - now)
            if drain_until is not None:
                wait = min(wait, drain_until - now)
            await asyncio.wait([pump], timeout=wait)
            if capture.last_line and capture.last_line != reported:
                reported = capture.last_line
                _report(progress, reported)
    if proc.returncode is None:
        # The output is closed but bash runs on (it closed its stdout): wait for its exit.
        try:
            async with asyncio.timeout(max(deadline - loop.time(), 0.0)):
                await proc.wait()
        except TimeoutError:
            return True
    return False


def _report(progress: Callable[[str], None], line: str) -> None:
    # The callback is the caller's; a failing one must not end the command or leak
    # out of the task group as an exception group.
    try:
        progress(line)
    except Exception:
        logger.exception("bash: the progress callback failed")


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # the group is already gone


async def _reap(proc: _Process, capture: _Capture) -> None:
    """End the process group: SIGTERM, a grace for bash to exit, then SIGKILL whatever is
    left. The SIGKILL is sent even if this wait is itself cancelled."""
    pgid = proc.pid  # start_new_session: bash leads its own group
    try:
        _signal_group(pgid, signal.SIGTERM)
        if proc.returncode is None:
            await _settle(proc, capture, TERM_GRACE)
    finally:
        _signal_group(pgid, signal.SIGKILL)
    if not await _settle(proc, capture, REAP_DEADLINE):
        logger.warning("bash: process group %d did not close its output in time", pgid)
    capture.feed(b"", final=True)


async def _settle(proc: _Process, capture: _Capture, seconds: float) -> bool:
    """Read the rest of the output until the pipe closes (every holder of it is gone) and
    bash is reaped; False if `seconds` pass first. Reading matters: a full pipe buffer pauses
    the transport, and a paused transport never sees the pipe close."""
    try:
        async with asyncio.timeout(seconds):
            if proc.stdout is not None:
                await _pump(proc.stdout, capture)
            await proc.wait()
    except TimeoutError:
        return False
    return True


def _answer(capture: _Capture, returncode: int | None, timed_out: float | None) -> ToolOutput:
    output = capture.text().rstrip("\n") or "(no output)"
    if timed_out is not None:
        status = (
            f"[timed out after {timed_out:g} s: the command and every process it started were "
            "killed; raise `timeout` (at most 600) or run something shorter]"
        )
        return error_output(f"{output}\n{status}")
    if returncode is None:
        # Unreachable in practice (bash is reaped before this), but never claim success.
        return error_output(f"{output}\n[the command's exit status is unknown]")
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = str(-returncode)
        return error_output(f"{output}\n[killed by signal {name}]")
    status = f"{output}\n[exit code {returncode}]"
    return error_output(status) if returncode else text_output(status)
