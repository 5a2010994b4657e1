"""The run factory as app.py makes it, over an empty plugin host, for the run tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from bingo.bridge import PluginHost
from bingo.kernel.gate import Gate
from bingo.kernel.hooks import Hooks
from bingo.kernel.notices import Notices
from bingo.kernel.registry import Registry
from bingo.kernel.settings import Settings
from bingo.run import ModelChooser, RunFactory
from bingo.sandbox import Sandbox
from bingo.surfaces import Surface

WAIT = 5.0


@asynccontextmanager
async def open_factory(tmp_path: Path, log: Surface) -> AsyncIterator[tuple[RunFactory, Notices]]:
    notices = Notices()
    settings = Settings()
    registry = Registry(notices)
    sandbox = Sandbox(
        settings.sandbox, home=tmp_path, bingo_home=tmp_path / ".bingo", project=tmp_path, environ={}, notices=notices
    )
    async with (
        PluginHost(
            sources=[], registry=registry, notices=notices, settings=settings, data_dir=tmp_path, cwd=tmp_path
        ) as plugins,
        Hooks(registry.hooks, notices, WAIT) as hooks,
    ):
        yield (
            RunFactory(
                registry=registry,
                settings=settings,
                gate=Gate(settings.permissions, project=str(tmp_path), sandboxed=False),
                hooks=hooks,
                notices=notices,
                sandbox=sandbox,
                plugins=plugins,
                trust="",
                choose_model=ModelChooser(settings, registry, {}),
                data_dir=tmp_path,
                project=tmp_path,
                home=tmp_path / ".bingo",
                log=log,
            ),
            notices,
        )
