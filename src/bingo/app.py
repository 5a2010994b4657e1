"""One run of bingo: settings, registry, plugins, session, then a command or a turn.

Owns the wiring of the layers for a run and the run's lifetime (`async with` for the plugin
host and the hooks, so every plugin process is gone when it returns). It does not parse the
command line (`cli.py`) and draws nothing itself (the surface does).
"""

from __future__ import annotations

import asyncio
import logging
import logging.handlers
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .kernel.commands import CompactCommand, HelpCommand, ToolsCommand
from .kernel.errors import SessionError, UsageError
from .kernel.frames import Frame, NoticeFrame, history
from .kernel.gate import Gate
from .kernel.hooks import Hooks
from .kernel.interfaces import CommandContext
from .kernel.notices import Notices
from .kernel.registry import Registry
from .kernel.settings import Settings, bingo_home, find_project, load_settings
from .kernel.turn import Conversation
from .surfaces.print import PrintSurface
from .wire import ErrorOutcome, Json, Notice, PromptOutcome

if TYPE_CHECKING:
    from .store import SessionStore

__all__ = ["Options", "run_app"]

_log = logging.getLogger("bingo")

_LOG_BYTES = 1_000_000
"""bingo's own log rotates past this size, keeping one old file."""


@dataclass(slots=True, frozen=True)
class Options:
    """What the command line asked for."""

    prompt: str | None
    print_mode: bool
    continue_latest: bool
    resume: str | None
    provider: str | None
    model: str | None
    allow: tuple[str, ...]
    trust: bool


@dataclass(slots=True)
class _LazySession:
    """The session a run writes to, created on its first frame so a slash command that
    never talks to a model leaves no empty session behind."""

    store: SessionStore
    project: str
    id: str | None = None
    turn: int = 0
    _pending: list[Frame] = field(default_factory=lambda: [])

    def ensure(self) -> str:
        if self.id is None:
            self.id = self.store.create(self.project)
        return self.id

    def append(self, frame: Frame) -> None:
        self.store.append(self.ensure(), frame)

    def notice(self, notice: Notice) -> None:
        if self.id is not None:
            self.store.append(self.id, NoticeFrame(notice=notice, turn=self.turn))


def _setup_logging(data_dir: Path) -> None:
    logs = data_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    handler = logging.handlers.RotatingFileHandler(logs / "bingo.log", maxBytes=_LOG_BYTES, backupCount=1, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)


def _overrides(options: Options) -> dict[str, Json]:
    out: dict[str, Json] = {}
    if options.allow:
        out["permissions"] = {"allow": list(options.allow)}
    if options.provider:
        out["provider"] = options.provider
    if options.model:
        out["model"] = options.model
    return out


async def run_app(options: Options) -> int:
    """Run what `options` ask for; the exit status."""
    environ = dict(os.environ)
    home = bingo_home(environ)
    user_home = Path(environ.get("HOME") or Path.home())
    cwd = Path.cwd()
    project = find_project(cwd, user_home)
    settings = load_settings(home=home, project=project, overrides=_overrides(options))
    data_dir = home / "data"
    _setup_logging(data_dir)
    if options.prompt is None:
        raise UsageError("the interactive terminal surface is not built yet", 'pass a prompt: bingo "PROMPT" or bingo -p "/help"')

    from .bridge import PluginHost, discover
    from .store import SessionStore

    surface = PrintSurface()
    notices = Notices()
    notices.listen(surface.notice)
    registry = Registry(notices)
    from .tools import builtin_tools

    for tool in builtin_tools():
        registry.add_tool(tool)
    gate = Gate(settings.permissions)
    store = SessionStore(data_dir / "sessions.db")
    try:
        session = _LazySession(store, str(project))
        messages = []
        if options.continue_latest:
            latest = store.latest(str(project))
            if latest is None:
                raise SessionError("there is no session to continue in this project", 'start one with bingo "PROMPT"')
            session.id = latest
        elif options.resume:
            session.id = store.find(options.resume)
        if session.id is not None:
            messages = history(store.frames(session.id))
        notices.listen(session.notice)
        sources = discover(home=home, project=project)
        async with PluginHost(sources=sources, registry=registry, notices=notices, settings=settings, data_dir=data_dir, cwd=cwd) as plugins:
            await plugins.start()
            async with Hooks(registry.hooks, notices, settings.deadline("hook/decide")) as hooks:
                conversation = Conversation(
                    registry=registry,
                    settings=settings,
                    gate=gate,
                    hooks=hooks,
                    notices=notices,
                    log=session,
                    events=surface,
                    asker=surface,
                    session=session.id or "",
                    cwd=str(cwd),
                    messages=messages,
                )
                for command in (HelpCommand(registry), ToolsCommand(registry, gate), CompactCommand(lambda: conversation.compact("manual"))):
                    registry.add_command(command)
                from .bridge import PluginsCommand

                registry.add_command(PluginsCommand(plugins))
                return await _run_prompt(options.prompt, conversation, session, registry, settings, surface, environ)
    finally:
        store.close()


async def _run_prompt(
    prompt: str,
    conversation: Conversation,
    session: _LazySession,
    registry: Registry,
    settings: Settings,
    surface: PrintSurface,
    environ: dict[str, str],
) -> int:
    if prompt.startswith("/"):
        name, _, args = prompt[1:].partition(" ")
        command = registry.commands.get(name)
        if command is None:
            raise UsageError(f"there is no command /{name}", "bingo -p /help lists them")
        verdict = await conversation.hooks.decide("command", "before", {"name": name, "args": args})
        if verdict.action in ("deny", "block"):
            surface.outcome(ErrorOutcome(message=f"/{name} was refused by a hook: {verdict.reason or 'no reason given'}"))
            return 1
        outcome = await command.run(args, CommandContext(cwd=conversation.cwd, session=session.id or ""))
        surface.outcome(outcome)
        if isinstance(outcome, ErrorOutcome):
            return 1
        if not isinstance(outcome, PromptOutcome):
            return 0
        prompt = outcome.text
    from .providers import builtin_providers, choose_provider, default_model

    providers = {p.spec.name: p for p in builtin_providers(environ)}
    providers.update(registry.providers)
    provider = choose_provider(settings.provider, providers, environ)
    conversation.provider = provider
    conversation.model = settings.model or default_model(provider)
    conversation.session = session.ensure()
    session.turn = conversation.turn + 1
    loop = asyncio.get_running_loop()
    interrupts = 0

    def on_sigint() -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts == 1:
            conversation.interrupt()
        else:
            surface.waiting("still waiting for the interrupted calls to answer")

    loop.add_signal_handler(signal.SIGINT, on_sigint)
    try:
        result = await conversation.run_turn(prompt)
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        surface.end()
    if result.status == "done":
        return 0
    surface.err.write(f"bingo: {result.reason}\n")
    return 1
