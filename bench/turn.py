"""bingo's own overhead per model turn: a turn against a provider that answers at once, bare
(no plugins) and loaded (10 context contributors and 5 `tool.before` hooks across 5 real
plugin processes, the bench child with `turn`), interleaved turn by turn.

Each turn is two model responses around one `read` of a small file (trusted and read-only,
so the gate lets it through without asking, after every `tool.before` hook has decided):
what every turn with a tool call pays. The provider is in-process and answers at once, so
what is timed is the kernel's own work (contributors asked concurrently, hooks in turn,
the gate, the tool, frames) plus the plugins' round trips. The history is reset each turn,
so turn 500 costs what turn 1 does. Prints nothing itself: `bench/rows.py` makes the rows.
Run alone: `.venv/bin/python bench/turn.py [--turns N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path

from bingo.bridge import PluginHost, PluginSource, read_manifest
from bingo.kernel.gate import Gate
from bingo.kernel.hooks import Hooks
from bingo.kernel.interfaces import PermissionAnswer
from bingo.kernel.notices import Notices
from bingo.kernel.registry import Registry
from bingo.kernel.settings import Settings
from bingo.kernel.turn import Conversation
from bingo.tools import builtin_tools
from bingo.wire import (
    Delta,
    Json,
    Message,
    ModelRequest,
    ModelResponse,
    ProviderSpec,
    TextBlock,
    ToolOutput,
    ToolUseBlock,
)

__all__ = ["interleaved"]

CHILD = Path(__file__).with_name("_child.py")
PLUGINS = 5
"""Plugin processes in the loaded turn; each declares two contributors and one hook."""
clock = time.perf_counter


class _AtOnce:
    """A provider that answers at once: first a `read` of `path`, then text."""

    def __init__(self, path: str) -> None:
        self._path = path

    @property
    def spec(self) -> ProviderSpec:
        return ProviderSpec(name="at-once", models=["m"])

    @property
    def source(self) -> str:
        return "bench"

    async def stream(self, request: ModelRequest, on_delta: Callable[[Delta], None]) -> ModelResponse:
        last = request.messages[-1].content[-1]
        if isinstance(last, TextBlock):
            use = ToolUseBlock(id=f"c{len(request.messages)}", name="read", input={"path": self._path})
            return ModelResponse(message=Message(role="assistant", content=[use]), stop_reason="toolUse")
        return ModelResponse(message=Message(role="assistant", content=[TextBlock(text="done")]), stop_reason="end")


class _Quiet:
    """TurnEvents, SessionLog and Asker that draw, keep and ask nothing."""

    def text(self, text: str) -> None: ...
    def tool_started(self, call_id: str, name: str, input: Json) -> None: ...
    def tool_progress(self, call_id: str, tail: str) -> None: ...
    def tool_finished(self, call_id: str, name: str, output: ToolOutput, seconds: float) -> None: ...
    def waiting(self, what: str) -> None: ...
    def refused(self, call_id: str, name: str, why: str) -> None:
        raise RuntimeError(f"the bench turn was refused: {why}")

    def append(self, frame: object) -> None: ...
    async def permission(self, name: str, input: Json, always: str) -> PermissionAnswer:
        raise RuntimeError("the bench turn asked for permission")

    async def ask(self, question: str, choices: list[str] | None) -> str:
        raise RuntimeError("the bench turn asked a question")


def _sources(root: Path) -> list[PluginSource]:
    sources: list[PluginSource] = []
    for i in range(PLUGINS):
        name = f"t{i}"
        home = root / "plugins" / name
        home.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CHILD, home / "main.py")
        manifest = {
            "name": name,
            "version": "1",
            "entry": {"command": sys.executable, "args": ["${PLUGIN_ROOT}/main.py", name, "-", "turn"]},
        }
        (home / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")
        sources.append(
            PluginSource(
                name=name, layer="user", root=home, manifest=read_manifest(home), problem=None, base=home.parent
            )
        )
    return sources


async def _conversation(stack: AsyncExitStack, root: Path, sources: list[PluginSource]) -> Conversation:
    notices = Notices()
    registry = Registry(notices)
    for tool in builtin_tools():
        registry.add_tool(tool, name=tool.name)
    settings = Settings()
    data = root / f"data-{len(sources)}"
    host = await stack.enter_async_context(
        PluginHost(sources=sources, registry=registry, notices=notices, settings=settings, data_dir=data, cwd=root)
    )
    await host.start()
    if len(registry.contributors) != 2 * len(sources) or len(registry.hooks) != len(sources):
        raise RuntimeError(f"the bench plugins did not all declare: {host.status()}")
    hooks = await stack.enter_async_context(Hooks(registry.hooks, notices, settings.deadline("hook/decide")))
    quiet = _Quiet()
    root.mkdir(parents=True, exist_ok=True)
    path = root / "small.txt"
    path.write_text("a small file\n" * 10, encoding="utf-8")
    return Conversation(
        registry=registry,
        settings=settings,
        gate=Gate(settings.permissions),
        hooks=hooks,
        notices=notices,
        log=quiet,
        events=quiet,
        asker=quiet,
        session="bench",
        cwd=str(root),
        provider=_AtOnce(str(path)),
        model="m",
    )


async def _turn(conversation: Conversation) -> float:
    conversation.messages = []
    start = clock()
    result = await conversation.run_turn("what is in small.txt?")
    elapsed = clock() - start
    if result.status != "done":
        raise RuntimeError(f"the bench turn ended {result.status}: {result.reason}")
    return elapsed


async def interleaved(root: Path, turns: int) -> dict[str, list[float]]:
    """Seconds per turn, `bare` and `loaded`, alternating who goes first."""
    async with AsyncExitStack() as stack:
        bare = await _conversation(stack, root / "bare", [])
        loaded = await _conversation(stack, root / "loaded", _sources(root / "loaded"))
        contenders = {"bare": bare, "loaded": loaded}
        for conversation in contenders.values():  # warm: imports, the read tool, every plugin
            for _ in range(20):
                await _turn(conversation)
        samples: dict[str, list[float]] = {name: [] for name in contenders}
        names = list(contenders)
        for n in range(turns):
            for k in range(len(names)):
                name = names[(n + k) % len(names)]
                samples[name].append(await _turn(contenders[name]))
        return samples


def main() -> None:
    import statistics
    import tempfile

    parser = argparse.ArgumentParser(description="bingo's own overhead per model turn")
    parser.add_argument("--turns", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bingo-bench-turn-") as tmp:
        samples = asyncio.run(interleaved(Path(tmp).resolve(), args.turns))
    for name, seconds in samples.items():
        ordered = sorted(seconds)
        print(
            f"{name:7} p50 {statistics.median(seconds) * 1e3:.3f} ms  p99 {ordered[int(len(ordered) * 0.99) - 1] * 1e3:.3f} ms"
        )


if __name__ == "__main__":
    main()
