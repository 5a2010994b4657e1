"""Load (issue 5, part 3): 20 plugin processes at once under one PluginHost, then 10 000
sequential and 1 000 concurrent tool calls through one of them, in process (the bridge and
its proxies, as bingo runs them). Open file descriptors, threads and resident memory are
measured before and after, and held to stated, generous bounds (a leak per call would blow
them by far; noise from a loaded machine would not):

  - fds:     back to the baseline ± 5 once the host has exited (every pipe closed), and
             within ± 5 of the warmed-up figure after the 11 000 calls;
  - threads: back to the baseline ± 2 once the host and its loop have exited;
  - RSS:     grows by less than 50 MiB over the 11 000 calls.

The figures go to the suite's summary. No timing is asserted (speed belongs in bench/).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import shutil
import threading
from pathlib import Path

from bingo.bridge import PluginHost, discover
from bingo.kernel.interfaces import Tool, ToolCall
from bingo.kernel.notices import Notices
from bingo.kernel.registry import Registry
from bingo.kernel.settings import load_settings
from bingo.wire import Notice, TextPart, ToolOutput
from tests.support import summary

PLUGINS = 20
SEQUENTIAL = 10_000
CONCURRENT = 1_000
ZOO = Path(__file__).resolve().parents[1] / "plugins" / "zoo" / "_zoo.py"


def _fds() -> int:
    gc.collect()  # what earlier tests left for the collector to close is not ours
    return len(os.listdir("/proc/self/fd"))


def _threads() -> int:
    return threading.active_count()


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _install(home: Path) -> None:
    """PLUGINS well-behaved zoo plugins (tool `poke` answers "poked"), load-00 … load-19."""
    for n in range(PLUGINS):
        root = home / "plugins" / f"load-{n:02d}"
        root.mkdir(parents=True)
        shutil.copy(ZOO, root / "main.py")
        manifest = {
            "name": root.name,
            "version": "0.1.0",
            "entry": {"command": "python3", "args": ["${PLUGIN_ROOT}/main.py"]},
        }
        (root / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")


def _text(output: ToolOutput) -> str:
    return "".join(part.text for part in output.parts if isinstance(part, TextPart))


async def _poke(tool: Tool, n: int) -> str:
    output = await tool.call(ToolCall(call_id=f"c{n}", input={}, cwd="/", session="load", turn=1))
    return _text(output)


def test_twenty_plugins_and_eleven_thousand_calls_leave_no_fd_thread_or_memory_behind(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    _install(home)
    said: list[Notice] = []
    figures: dict[str, int] = {}

    async def main() -> None:
        notices = Notices()
        notices.listen(said.append)
        registry = Registry(notices)
        settings = load_settings(home=home, project=project, project_trusted=True)
        figures["fds before"], figures["threads before"] = _fds(), _threads()
        host = PluginHost(
            sources=discover(home=home, project=project),
            registry=registry,
            notices=notices,
            settings=settings,
            data_dir=home / "data",
            cwd=project,
        )
        async with asyncio.timeout(120), host:
            await host.start()
            running = [status.name for status in host.status() if status.state == "running"]
            assert len(running) == PLUGINS
            tools = [registry.tools[f"plugin__load-{n:02d}__poke"] for n in range(PLUGINS)]
            # every plugin answers, all at once
            assert await asyncio.gather(*(_poke(tool, n) for n, tool in enumerate(tools))) == ["poked"] * PLUGINS
            tool = tools[0]
            for n in range(100):  # warm-up: caches, decoders, buffers
                await _poke(tool, n)
            figures["fds warm"], figures["rss warm (KiB)"] = _fds(), _rss_kib()
            for n in range(SEQUENTIAL):
                assert await _poke(tool, n) == "poked"
            answers = await asyncio.gather(*(_poke(tool, n) for n in range(CONCURRENT)))
            assert answers == ["poked"] * CONCURRENT
            figures["fds after calls"], figures["rss after calls (KiB)"] = _fds(), _rss_kib()
            figures["threads during"] = _threads()

    asyncio.run(main())
    # After the loop has closed: its executor's idle workers are gone with it.
    figures["fds after"], figures["threads after"] = _fds(), _threads()
    rss_growth = figures["rss after calls (KiB)"] - figures["rss warm (KiB)"]
    summary.record("load", "plugins at once", PLUGINS)
    summary.record("load", "calls (sequential + concurrent)", SEQUENTIAL + CONCURRENT)
    summary.record(
        "load",
        "fds before / warm / after calls / after exit",
        "{} / {} / {} / {}".format(
            figures["fds before"], figures["fds warm"], figures["fds after calls"], figures["fds after"]
        ),
    )
    summary.record(
        "load",
        "threads before / during / after",
        "{} / {} / {}".format(figures["threads before"], figures["threads during"], figures["threads after"]),
    )
    summary.record("load", "RSS growth over the calls (MiB)", rss_growth / 1024)
    assert said == []
    assert abs(figures["fds after"] - figures["fds before"]) <= 5
    assert abs(figures["fds after calls"] - figures["fds warm"]) <= 5
    assert abs(figures["threads after"] - figures["threads before"]) <= 2
    assert rss_growth < 50 * 1024
