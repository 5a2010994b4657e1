"""A child conversation's own overhead (issue 33): opening a subagent's run and its first
model request, beside a top-level `-p` run's, interleaved in one process.

Both are opened by the one run factory as app.py makes it (over an empty plugin host, the
built-in tools registered, a provider that answers at once), and timed from the call that
opens them to the moment their first request reaches the provider:
  - top-level: `RunFactory.open(surface, "print")` and `Run.dispatch(prompt)`, as `-p` runs
    a prompt: the run and its session (a new one each time, created at the first frame), the
    turn's checkpoint of the project, the system prompt, the request;
  - child: `RunFactory.child(parent, …)` and `ChildRun.run(prompt)`, as the `agent` tool runs
    one: the child's conversation (the parent's system prompt plus the agent's words, its
    tools), what is seen and kept of it (`run._seen.attach`: its live line, its frames in the
    parent's session), the request.
The process's start is neither's (a child never pays it): what is compared is what each
conversation costs on its own. Each turn is then let run to its end (one answer) and the
run closed or the child let go, outside the timing. Issue 33's bar: the child within 1.2x of
the top-level run. Prints figures, asserts nothing; `bench/rows.py` makes a row of it.
Run alone: `.venv/bin/python bench/agent.py [--runs N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bingo.bridge import PluginHost
from bingo.kernel.gate import Gate
from bingo.kernel.hooks import Hooks
from bingo.kernel.interfaces import PermissionAnswer
from bingo.kernel.notices import Notices
from bingo.kernel.registry import Registry
from bingo.kernel.settings import Settings
from bingo.run import RunFactory
from bingo.sandbox import Sandbox
from bingo.tools import builtin_tools
from bingo.wire import (
    CommandOutcome,
    Delta,
    Json,
    Message,
    ModelRequest,
    ModelResponse,
    Notice,
    ProviderSpec,
    TextBlock,
    ToolOutput,
)

__all__ = ["interleaved"]

clock = time.perf_counter


class _AtOnce:
    """A provider that answers "ok" at once, noting when each request reached it."""

    def __init__(self) -> None:
        self.asked: float | None = None

    @property
    def spec(self) -> ProviderSpec:
        return ProviderSpec(name="at-once", models=["m"])

    @property
    def source(self) -> str:
        return "bench"

    async def stream(self, request: ModelRequest, on_delta: Callable[[Delta], None]) -> ModelResponse:
        if self.asked is None:
            self.asked = clock()
        return ModelResponse(message=Message(role="assistant", content=[TextBlock(text="ok")]), stop_reason="end")


class _Quiet:
    """A surface that draws nothing and asks nobody."""

    def text(self, text: str) -> None: ...
    def tool_started(self, call_id: str, name: str, input: Json) -> None: ...
    def tool_progress(self, call_id: str, tail: str) -> None: ...
    def tool_finished(self, call_id: str, name: str, output: ToolOutput, seconds: float) -> None: ...
    def waiting(self, what: str) -> None: ...
    def refused(self, call_id: str, name: str, why: str) -> None:
        raise RuntimeError(f"the bench turn was refused: {why}")

    def notice(self, notice: Notice) -> None: ...
    def outcome(self, outcome: CommandOutcome) -> None: ...
    def end(self) -> None: ...
    async def permission(self, name: str, input: Json, always: str) -> PermissionAnswer:
        raise RuntimeError("the bench turn asked for permission")

    async def ask(self, question: str, choices: list[str] | None) -> str:
        raise RuntimeError("the bench turn asked a question")


def _project(root: Path) -> Path:
    """A small project: a few files for the checkpoint to look at, as a fresh repository has."""
    project = root / "project"
    (project / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    for n in range(20):
        (project / "src" / f"m{n}.py").write_text(f"x = {n}\n" * 20, encoding="utf-8")
    (project / "README.md").write_text("# bench\n", encoding="utf-8")
    return project


async def interleaved(root: Path, runs: int) -> dict[str, list[float]]:
    """Seconds from open to first request, `top` (a `-p` run) and `child` (a subagent's),
    alternating who goes first."""
    project = _project(root)
    home = root / "home" / ".bingo"
    home.mkdir(parents=True)
    notices = Notices()
    settings = Settings()
    registry = Registry(notices)
    for tool in builtin_tools():
        registry.add_tool(tool, name=tool.name)
    provider = _AtOnce()
    quiet = _Quiet()
    sandbox = Sandbox(settings.sandbox, home=root, bingo_home=home, project=project, environ={}, notices=notices)
    async with (
        PluginHost(
            sources=[], registry=registry, notices=notices, settings=settings, data_dir=home, cwd=project
        ) as plugins,
        Hooks(registry.hooks, notices, 5.0) as hooks,
    ):
        factory = RunFactory(
            registry=registry,
            settings=settings,
            gate=Gate(settings.permissions, project=str(project), sandboxed=False),
            hooks=hooks,
            notices=notices,
            sandbox=sandbox,
            plugins=plugins,
            trust="",
            choose_model=lambda: (provider, "m"),
            data_dir=home / "data",
            project=project,
            home=home,
            log=quiet,
        )
        parent = factory.open(quiet, "print")
        parent.session.ensure()  # the children's frames are kept in it, as a turn's are
        calls = 0

        async def top() -> float:
            provider.asked = None
            started = clock()
            run = factory.open(quiet, "print")
            submitted = await run.dispatch("hi")
            run.close()
            assert submitted.status == 0 and provider.asked is not None, submitted
            return provider.asked - started

        async def child() -> float:
            nonlocal calls
            calls += 1
            provider.asked = None
            started = clock()
            made = await factory.child(parent, agent=None, description="a look", call_id=f"a{calls}", cwd=str(project))
            result = await made.run("hi")
            await factory.let_go(made)
            assert result.status == "done" and provider.asked is not None, result
            return provider.asked - started

        contenders = {"top": top, "child": child}
        for measure in contenders.values():  # warm: imports, the store, the checkpoint's look
            for _ in range(10):
                await measure()
        samples: dict[str, list[float]] = {name: [] for name in contenders}
        names = list(contenders)
        for n in range(runs):
            for k in range(len(names)):
                name = names[(n + k) % len(names)]
                samples[name].append(await contenders[name]())
        parent.close()
        return samples


def main() -> None:
    parser = argparse.ArgumentParser(description="a child conversation's own overhead beside a -p run's")
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bingo-bench-agent-") as tmp:
        samples = asyncio.run(interleaved(Path(tmp).resolve(), args.runs))
    top, child = statistics.median(samples["top"]), statistics.median(samples["child"])
    for name, seconds in samples.items():
        ordered = sorted(seconds)
        print(
            f"{name:6} open to first request  p50 {statistics.median(seconds) * 1e3:7.3f} ms"
            f"  p99 {ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1e3:7.3f} ms  ({args.runs} runs)"
        )
    print(f"child / top {child / top:.2f}x (issue 33's bar: at most 1.2x)")


if __name__ == "__main__":
    main()
