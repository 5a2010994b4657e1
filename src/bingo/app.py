"""One run of bingo: settings, registry, plugins, session, then a command or a turn.

Owns the wiring of the layers for a run and the run's lifetime (`async with` for the plugin
host and the hooks, so every plugin process is gone when it returns): it builds the
settings, registry, plugin host, hooks, conversation and the kernel's dispatcher, and hands
the surface a `Run` to drive. It does not parse the command line (`cli.py`), does not
dispatch what the person submits (`kernel.dispatch` does: commands, their hooks, turns) and
draws nothing itself (the surface does).

Start-up is on the path of every `bingo -p "/command"`, so it does only what the run needs,
in an order that lets a plugin start early (issue 6): the session store is opened only when
a session is continued or a first frame is written; built-in tools are registered by name
and imported when first used; with a warm declaration cache no plugin is started at all
until it is used, and the plugin behind a command given on the command line is started as
soon as its declaration is known, so its interpreter starts while bingo finishes its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from .kernel.commands import CompactCommand, ContextCommand, HelpCommand, ModelCommand, ToolsCommand
from .kernel.dispatch import ChooseModel, Dispatcher, Submitted
from .kernel.errors import ProviderError, SessionError, TrustError, UsageError
from .kernel.frames import CompactionFrame, Frame, NoticeFrame, history, spent
from .kernel.gate import Gate, rule_problems
from .kernel.home import data_dir as data_dir_of
from .kernel.hooks import Hooks
from .kernel.interfaces import Asker, CommandContext, Provider, ToolCall
from .kernel.log import LOG_BYTES, SizedFileHandler
from .kernel.notices import Notices
from .kernel.registry import BUILTIN, Registry
from .kernel.settings import Settings, bingo_home, fail_closed_problems, find_project, load_settings, unsafe_layers
from .kernel.system import system_prompt
from .kernel.turn import Compacted, Conversation
from .sandbox import Sandbox, SandboxCommand
from .surfaces import (
    EXIT_COMMANDS,
    ClearCommand,
    ExitCommand,
    PrintSurface,
    SessionsCommand,
    Surface,
    UsageCommand,
    escape,
    one_line,
)
from .wire import CommandOutcome, CommandSpec, Completion, ImageBlock, Json, Message, Notice, ToolOutput

if TYPE_CHECKING:
    from .bridge.check import McpJsonReport, Report
    from .kernel.interfaces import Command
    from .providers import HttpProvider
    from .store import SessionInfo, SessionStore
    from .surfaces.acp import HostMcp, MakeSession, McpServerSpec
    from .surfaces.channel import MakeRoom
    from .surfaces.terminal import Opening
    from .wire import Usage

__all__ = ["Options", "Run", "run_app"]


_NOTICE_FRAMES = 100
"""Notice frames a session keeps of one turn (then one saying so): a turn's real notices fit
many times over, and each plugin's own are limited already (kernel.notices)."""


class Options(msgspec.Struct, frozen=True):
    """What the command line asked for."""

    prompt: str | None
    print_mode: bool
    continue_latest: bool
    resume: str | None
    """`--resume ID`; "" for `--resume` with no id (a list to choose from, on a terminal)."""
    provider: str | None
    model: str | None
    allow: tuple[str, ...]
    trust: bool
    channel: str | None = None
    """`--channel matrix`: be a bot in the channel's rooms (surfaces.channel)."""
    acp: bool = False
    """`--acp`: be an editor's agent over the Agent Client Protocol (surfaces.acp)."""
    check_plugin: str | None = None
    """`--check-plugin DIR`: check the plugin in DIR and exit (bridge.check)."""
    check_call: bool = False
    """`--call`: the check calls each tool too."""
    check_json: bool = False
    """`--json`: the check's report as one JSON document."""
    no_sandbox: bool = False
    """`--no-sandbox`: this run without the sandbox (INTERFACE.md §9)."""


class _LazySession(msgspec.Struct):
    """The session a run writes to, created on its first frame so a slash command that
    never talks to a model leaves no empty session behind; the store itself is opened on
    first use too, so such a command never opens (nor checkpoints) the file."""

    path: Path
    project: str
    id: str | None = None
    turn: int = 0
    _store: SessionStore | None = None
    _noticed_in: tuple[str, int] | None = None
    _noticed: int = 0
    """Notice frames written for the (session, turn) `_noticed_in`."""
    planned: str | None = None
    """The id the session is to be created under (an editor's, given before its first frame)."""

    @property
    def store(self) -> SessionStore:
        if self._store is None:
            from .store import SessionStore

            planned = self.planned
            self._store = SessionStore(self.path, id_factory=(lambda: planned) if planned is not None else None)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    def ensure(self) -> str:
        if self.id is None:
            self.id = self.store.create(self.project)
        return self.id

    def append(self, frame: Frame) -> None:
        self.store.append(self.ensure(), frame)

    def begin_turn(self, turn: int) -> None:
        self.turn = turn

    def notice(self, notice: Notice) -> None:
        if self.id is None:
            return
        if self._noticed_in != (self.id, self.turn):
            self._noticed_in, self._noticed = (self.id, self.turn), 0
        self._noticed += 1
        if self._noticed > _NOTICE_FRAMES + 1:
            return
        if self._noticed > _NOTICE_FRAMES:
            message = f"turn {self.turn} raised more than {_NOTICE_FRAMES} notices; the session keeps no more of them"
            notice = Notice(source="bingo", message=message, level="warning")
        self.store.append(self.id, NoticeFrame(notice=notice, turn=self.turn))


def _sandbox(
    settings: Settings, *, user_home: Path, home: Path, project: Path, environ: dict[str, str], notices: Notices
) -> Sandbox:
    """The run's sandbox, its settings' problems said and its mechanism probed.

    Raises:
        SettingsError: it is required (`sandbox.mode`) and cannot be in force (exit 2).
    """
    for problem in settings.sandbox.problems:
        notices.say("bingo", problem, "warning")
    sandbox = Sandbox(
        settings.sandbox,
        home=user_home,
        bingo_home=home,
        project=project,
        environ=environ,
        notices=notices,
        matrix_token=settings.matrix.access_token_env,
    )
    sandbox.start()
    return sandbox


def _setup_logging(data_dir: Path) -> None:
    """bingo's own log, `<data_dir>/logs/bingo.log`, opened at the first record and set
    aside as `bingo.log.1` each time it passes LOG_BYTES (one old file kept)."""
    logs = data_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    handler = SizedFileHandler(logs / "bingo.log", max_bytes=LOG_BYTES)
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
    if options.no_sandbox:
        out["sandbox"] = {"mode": "off"}
    return out


async def run_app(options: Options) -> int:
    """Run what `options` ask for; the exit status."""
    environ = dict(os.environ)
    home = bingo_home(environ)
    user_home = Path(environ.get("HOME") or Path.home())
    try:
        cwd = Path.cwd()
    except FileNotFoundError:
        raise UsageError(
            "the working directory no longer exists (it was removed while this shell was in it)",
            "cd to a directory that exists and run bingo again",
        ) from None
    project = find_project(cwd, user_home)
    # Read as if untrusted first: every layer is checked, and what trust would add is known.
    settings = load_settings(home=home, project=project, project_trusted=False, overrides=_overrides(options))
    if options.channel is not None and settings.matrix.cwd:
        cwd = _enter(settings.matrix.cwd)  # the channel's directory is the project
        project = find_project(cwd, user_home)
        settings = load_settings(home=home, project=project, project_trusted=False, overrides=_overrides(options))
    if options.channel is not None:
        os.environ.pop(
            settings.matrix.access_token_env, None
        )  # the bot's token is bingo's: no plugin inherits it (`environ` keeps it)
    data_dir = data_dir_of(home)
    _setup_logging(data_dir)
    if options.check_plugin is not None:
        return await _check_plugin(
            options,
            options.check_plugin,
            settings=settings,
            home=home,
            project=project,
            cwd=cwd,
            data_dir=data_dir,
            environ=environ,
        )
    from .bridge import discover, remember, trust_state

    sources = discover(home=home, project=project, environ=environ, variables=settings.mcp_variables)
    state = trust_state(project=project, cwd=cwd, sources=sources, settings=settings, data_dir=data_dir)
    ignored = [
        f"{problem}: ignored, as git ignores a repository it does not own" for problem in unsafe_layers(cwd, user_home)
    ]
    if options.trust:
        from .bridge import trust_line

        # Printed here, not by a surface: both name directories and plugins (escaped, §8).
        for line in ignored:
            print(escape(f"bingo: {line}"), file=sys.stderr)
        print(escape(trust_line(state, remember(state, data_dir))))
        return 0
    interactive = (
        options.channel is None
        and not options.acp
        and not options.print_mode
        and sys.stdin.isatty()
        and sys.stdout.isatty()
    )
    if options.resume == "" and not interactive:
        raise UsageError(
            "--resume with no session id needs a terminal to choose one on",
            "give the session's id: bingo --resume ID (bingo -p /sessions lists them)",
        )
    if options.prompt is None and not interactive and options.channel is None and not options.acp:
        raise UsageError(
            "no prompt was given and there is no terminal to ask for one",
            'pass a prompt (bingo -p "PROMPT") or pipe one in (echo "PROMPT" | bingo)',
        )
    if options.prompt is not None and not options.prompt.strip():
        # `bingo -p "$PROMPT"` with the variable unset: nothing to send (a model API refuses
        # an empty message, after a turn was opened for it).
        raise UsageError("the prompt is empty", 'write what you want in it: bingo -p "PROMPT"')
    surface = _surface(options, interactive)

    from .bridge import PluginHost, PluginsCommand, admitted, ask_trust, left_out_notice, trust_summary
    from .tools import builtin_tools

    notices = Notices(kept_in=str(data_dir / "logs" / "bingo.log"))
    notices.listen(surface.notice)
    for line in ignored:
        notices.say("bingo", line, "warning")
    # From the first read, which checks every layer: a trusted project's second read
    # would name them again.
    for line in settings.unknown:
        notices.say("bingo", line, "warning")
    if state.pending and interactive and await ask_trust(_start_asker(), state):
        try:
            state = remember(state, data_dir)
        except TrustError as exc:
            notices.say("bingo", f"{exc.line()}; trusted for this run only", "warning")
            state = msgspec.structs.replace(state, status="trusted", pending=())
    if state.trusted and settings.left_out:
        settings = load_settings(home=home, project=project, project_trusted=True, overrides=_overrides(options))
    if state.pending:
        notices.say("bingo", left_out_notice(state, sources), "warning")
    run_sources, listed = admitted(sources, state)
    sandbox = _sandbox(settings, user_home=user_home, home=home, project=project, environ=environ, notices=notices)
    registry = Registry(notices)
    for tool in builtin_tools(str(project), sandbox=sandbox):
        # By name: reading a built-in's spec would import its module, which only a model
        # turn needs.
        registry.add_tool(tool, name=tool.name)
    gate = Gate(settings.permissions, project=str(project), sandboxed=sandbox.in_force)
    choose_model = _ModelChooser(settings, registry, environ)  # the run's one: closed below
    session = _LazySession(data_dir / "sessions.db", str(project))
    try:
        messages: list[Message] = []
        compacted = (0, 0)
        resume = options.resume
        if resume == "":
            resume = await _choose_session(session.store, str(project))
            if resume is None:
                notices.say("bingo", "no session chosen: this is a new one")
        if options.continue_latest or resume:
            from .store import continue_session

            # Claimed for this run (one writer per session), and another project's only as ADR-0029 says.
            session.id = await continue_session(
                session.store,
                str(project),
                latest=options.continue_latest,
                resume=resume,
                ask=_start_asker().ask if interactive else None,
                say=lambda line: notices.say("bingo", line, "warning"),
            )
        if session.id is not None:
            frames = session.store.frames(session.id)
            messages, compacted = history(frames), _compacted(frames)
        notices.listen(session.notice)
        async with (
            sandbox,
            PluginHost(
                sources=run_sources,
                listed=listed,
                digests=state.digests(),
                registry=registry,
                notices=notices,
                settings=settings,
                data_dir=data_dir,
                cwd=cwd,
                choose_model=choose_model,
                sandbox=sandbox,
            ) as plugins,
        ):
            await plugins.start()
            # Once the tools are known (registered from the handshakes or the cache): the
            # rules that can match none of them, and failClosed names that are no plugin.
            tools = {name: tool.source for name, tool in registry.tools.items()}
            for line in rule_problems(settings.rules, tools, {source.name for source in sources}):
                notices.say("bingo", line, "warning")
            for line in fail_closed_problems(
                settings.fail_closed, {source.name for source in sources}, str(home / "settings.json")
            ):
                notices.say("bingo", line, "warning")
            plugins.warm(options.prompt)
            async with Hooks(
                registry.hooks, notices, settings.deadline("hook/decide"), fail_closed=settings.fail_closed
            ) as hooks:
                if options.channel is not None:
                    from .surfaces.channel import serve_matrix

                    make_room = _rooms(
                        registry=registry,
                        settings=settings,
                        gate=gate,
                        hooks=hooks,
                        notices=notices,
                        data_dir=data_dir,
                        project=project,
                        cwd=cwd,
                        environ=environ,
                        choose=choose_model,
                        plugins_command=PluginsCommand(plugins, trust_summary(state), sandbox),
                        sandbox_command=SandboxCommand(sandbox),
                    )
                    return await serve_matrix(settings.matrix, environ=environ, data_dir=data_dir, make_room=make_room)
                if options.acp:
                    from . import __version__
                    from .surfaces.acp import AcpLog, serve_acp

                    assert isinstance(surface, AcpLog)  # chosen above for --acp
                    make_session = _editor_sessions(
                        registry=registry,
                        settings=settings,
                        gate=gate,
                        hooks=hooks,
                        notices=notices,
                        data_dir=data_dir,
                        project=project,
                        environ=environ,
                        choose=choose_model,
                        plugins_command=PluginsCommand(plugins, trust_summary(state), sandbox),
                        sandbox_command=SandboxCommand(sandbox),
                    )
                    async with (
                        contextlib.AsyncExitStack() as editor_plugins
                    ):  # the editor's MCP servers, gone on return
                        host_mcp = _editor_mcp(
                            editor_plugins,
                            registry=registry,
                            notices=notices,
                            settings=settings,
                            data_dir=data_dir,
                            plugins={source.name for source in sources},
                            sandbox=sandbox,
                        )
                        return await serve_acp(log=surface, make=make_session, version=__version__, host_mcp=host_mcp)
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
                    system=_system_prompt(notices, set(), cwd=cwd, project=project, home=home),
                    windows=_windows,
                )
                chosen, compact = _before_a_turn(lambda: conversation, choose_model)
                for command in (
                    HelpCommand(registry),
                    ToolsCommand(registry, gate),
                    CompactCommand(compact),
                    ContextCommand(conversation, chosen),
                    ModelCommand(conversation, chosen),
                    PluginsCommand(plugins, trust_summary(state), sandbox),
                    SandboxCommand(sandbox),
                ):
                    registry.add_command(command)
                registry.add_command(SessionsCommand(lambda: session.store.sessions(session.project)))
                registry.add_command(
                    UsageCommand(
                        lambda: conversation.used,
                        lambda: spent(session.store.frames(session.id)) if session.id else None,
                    )
                )
                for name in sorted(EXIT_COMMANDS):
                    registry.add_command(ExitCommand.named(name))
                dispatcher = Dispatcher(
                    registry=registry,
                    conversation=conversation,
                    session=session,
                    choose_model=choose_model,
                    help_hint="/help lists them" if interactive else "bingo -p /help lists them",
                )
                run = Run(
                    dispatcher=dispatcher,
                    conversation=conversation,
                    session=session,
                    surface=surface,
                    data_dir=data_dir,
                    hooks=hooks,
                )
                run.started()
                try:
                    if options.prompt is not None and not interactive:
                        return await run.submit_with_interrupts(options.prompt)
                    from .surfaces.terminal import TerminalSurface, interact, terminal_commands

                    assert isinstance(surface, TerminalSurface)  # chosen above for an interactive run
                    for command in terminal_commands(run, surface):
                        registry.add_command(command)
                    surface.dry_run = _dry_run(registry, conversation)
                    conversation.on_always = run.remember
                    sandbox.hosts.ask, sandbox.hosts.remember = surface.ask, run.remember_host
                    opening = _opening(
                        settings,
                        registry,
                        environ,
                        cwd=cwd,
                        home=user_home,
                        session=session.id,
                        past=messages,
                        compacted=compacted,
                    )
                    return await interact(
                        run,
                        surface,
                        first=options.prompt,
                        opening=opening,
                        used=lambda: conversation.used,
                        session=run.session_id,
                        unsent=run.take_unsent,
                        model=lambda: conversation.model if conversation.provider is not None else None,
                    )
                finally:
                    run.ended()
    finally:
        await choose_model.aclose()  # the providers' HTTP clients (ADR-0040)
        session.close()


def _before_a_turn(
    conversation_of: Callable[[], Conversation], choose: ChooseModel
) -> tuple[Callable[[], None], Callable[[], Awaitable[Compacted]]]:
    """What /context and /compact call: `chosen` gives the conversation the model a turn
    would use (its summary, its window) when it has none yet, and none when none can be had;
    `compact` compacts by hand, with that model once there is history to summarise."""

    def chosen() -> None:
        conversation = conversation_of()
        if conversation.provider is None:
            try:
                conversation.provider, conversation.model = choose()
            except ProviderError:
                pass

    async def compact() -> Compacted:
        conversation = conversation_of()
        if conversation.messages:
            chosen()
        return await conversation.compact("manual")

    return chosen, compact


class _ModelChooser:
    """The run's model choice (a ChooseModel), made when the first turn needs it: the
    providers package (and httpx with it) is imported only then, and a plugin's provider
    counts as well. The built-in providers are built at the first choice and kept for the
    run, each with its one HTTP client (ADR-0040); `aclose` closes them at the run's end."""

    __slots__ = ("_builtins", "_environ", "_registry", "_settings")

    def __init__(self, settings: Settings, registry: Registry, environ: dict[str, str]) -> None:
        self._settings = settings
        self._registry = registry
        self._environ = environ
        self._builtins: list[HttpProvider] | None = None

    def __call__(self) -> tuple[Provider, str]:
        from .providers import builtin_providers, choose_provider, default_model

        settings = self._settings
        if self._builtins is None:
            self._builtins = builtin_providers(
                self._environ,
                notices=self._registry.notices,
                attempts=settings.model_attempts,
                stall_seconds=settings.model_stall_seconds,
            )
        providers: dict[str, Provider] = {p.spec.name: p for p in self._builtins}
        providers.update(self._registry.providers)
        provider = choose_provider(settings.provider, providers, self._environ)
        return provider, settings.model or default_model(provider)

    async def aclose(self) -> None:
        """Close the built-in providers' HTTP clients (none is made before a request)."""
        for provider in self._builtins or ():
            await provider.aclose()


def _windows(provider: str, model: str) -> int | None:
    """The providers' table of context windows, imported when a turn first needs it."""
    from .providers import context_window

    return context_window(provider, model)


def _compacted(frames: list[Frame]) -> tuple[int, int]:
    """For a session whose history starts at a compaction: how many messages it replaced,
    and how many of the history's first messages it wrote itself (a summary and its answer,
    no one's words: the messages it kept are the ones the history held before it); (0, 0)
    for a session never compacted."""
    at = next((i for i in range(len(frames) - 1, -1, -1) if isinstance(frames[i], CompactionFrame)), None)
    if at is None:
        return 0, 0
    frame = frames[at]
    assert isinstance(frame, CompactionFrame)
    before = history(frames[:at])
    made = frame.compaction.messages
    own = next((n for n, message in enumerate(made) if message in before), len(made))
    return max(len(before) - (len(made) - own), 0), own


def _opening(
    settings: Settings,
    registry: Registry,
    environ: dict[str, str],
    *,
    cwd: Path,
    home: Path,
    session: str | None,
    past: list[Message],
    compacted: tuple[int, int] = (0, 0),
) -> Opening:
    """What the terminal's banner names: the provider and model the first turn will use,
    chosen as that turn will choose them (which builds no client and asks nothing: httpx is
    imported at the first request), or what is wrong and how to set one."""
    from . import __version__
    from .surfaces.terminal import Opening

    try:
        provider, model = _ModelChooser(settings, registry, environ)()
        chosen, unset = (provider.spec.name, model), ""
    except ProviderError as exc:
        chosen, unset = (None, None), exc.line()
    return Opening(
        version=__version__,
        provider=chosen[0],
        model=chosen[1],
        unset=unset,
        cwd=str(cwd),
        home=str(home),
        session=session,
        past=past,
        compacted=compacted[0],
        summary=compacted[1],
    )


async def _choose_session(store: SessionStore, project: str) -> str | None:
    """`--resume` with no id, on a terminal: the session the person picks from this
    project's (the latest first); None when they press Esc (a new session starts).

    Raises:
        SessionError: the project has no session yet.
    """
    from .surfaces.terminal import choose_session

    found = store.sessions(project)
    if not found:
        raise SessionError("there is no session to continue in this project", 'start one with bingo "PROMPT"')
    return await choose_session(found)


def _start_asker() -> Asker:
    from .surfaces.terminal import StartAsker

    return StartAsker()


def _enter(where: str) -> Path:
    """Work in `where` (a channel's `cwd`); UsageError when it is no directory."""
    path = Path(where).expanduser()
    try:
        os.chdir(path)
    except OSError as exc:
        raise UsageError(
            f"channels.matrix.cwd {where} cannot be used ({exc.strerror})", "set it to a directory that exists"
        ) from None
    return Path.cwd()


class _RoomContext(msgspec.Struct):
    """`/context` in a channel: ContextCommand's, over the conversation of the room whose
    message runs (the registry is the run's one, the conversations are the rooms')."""

    conversation: Callable[[], Conversation]
    choose_model: Callable[[], None]
    spec: CommandSpec = CommandSpec(
        name="context", hint="show the system prompt and what the model's context holds", instant=True, family="bingo"
    )
    source: str = BUILTIN

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        return await ContextCommand(self.conversation(), self.choose_model).run(args, ctx)

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []


def _rooms(
    *,
    registry: Registry,
    settings: Settings,
    gate: Gate,
    hooks: Hooks,
    notices: Notices,
    data_dir: Path,
    project: Path,
    cwd: Path,
    environ: dict[str, str],
    choose: ChooseModel,
    plugins_command: Command,
    sandbox_command: Command,
) -> MakeRoom:
    """The maker of each channel room's run: its own session and conversation over the
    run's one registry, gate, hooks and plugins. The commands that act on "this session"
    find the room's through a context variable its worker sets when it makes the room."""
    from .surfaces.channel import RoomRun, StopCommand

    registry.add_command(StopCommand())
    current: contextvars.ContextVar[tuple[Conversation, _LazySession]] = contextvars.ContextVar("bingo_room_run")

    chosen, compact = _before_a_turn(lambda: current.get()[0], choose)
    for command in (
        HelpCommand(registry),
        ToolsCommand(registry, gate),
        CompactCommand(compact),
        _RoomContext(lambda: current.get()[0], chosen),
        plugins_command,
        sandbox_command,
    ):
        registry.add_command(command)
    registry.add_command(SessionsCommand(lambda: current.get()[1].store.sessions(str(project))))

    def room_spent() -> Usage | None:
        session = current.get()[1]
        return spent(session.store.frames(session.id)) if session.id else None

    registry.add_command(UsageCommand(lambda: current.get()[0].used, room_spent))
    # /exit and /quit are not a room's (the bot runs on: the room says so); /clear is, over the room's run.
    clear: contextvars.ContextVar[Callable[[], None]] = contextvars.ContextVar("bingo_room_clear")
    registry.add_command(ClearCommand(lambda: clear.get()()))
    system = _system_prompt(notices, set(), cwd=cwd, project=project, home=bingo_home(environ))

    def make(surface: Surface, session_id: str | None) -> RoomRun:
        session = _LazySession(data_dir / "sessions.db", str(project))
        messages: list[Message] = []
        if session_id is not None:
            from .store import load_session

            try:
                session.id = load_session(
                    session.store, session_id, str(project), None
                )  # this project's, and this run's alone
                messages = history(session.store.frames(session.id))
            except SessionError as exc:
                notices.say("bingo", f"{exc.line()}; this room starts a new session", "warning")
                session.id = None
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
            system=system,
            windows=_windows,
        )
        dispatcher = Dispatcher(
            registry=registry,
            conversation=conversation,
            session=session,
            choose_model=choose,
            help_hint="/help lists them",
        )
        run = Run(
            dispatcher=dispatcher,
            conversation=conversation,
            session=session,
            surface=surface,
            data_dir=data_dir,
            hooks=hooks,
        )
        conversation.on_always = run.remember
        current.set((conversation, session))
        clear.set(run.clear)
        # The room's notices go into its session too, as a terminal run's do.
        notices.listen(
            lambda notice: (
                session.notice(notice) if (here := current.get(None)) is not None and here[1] is session else None
            )
        )
        run.started()

        def close() -> None:
            run.ended()
            session.close()

        return RoomRun(driver=run, session=lambda: session.id, close=close)

    return make


def _system_prompt(notices: Notices, said: set[str], *, cwd: Path, project: Path, home: Path) -> str:
    """The system prompt's text; each instruction file it leaves out (a link out of its
    layer, a FIFO, a device) named in one notice, unless `said` holds that line already."""
    prompt = system_prompt(cwd=cwd, project=project, home=home)
    for left in prompt.left_out:
        line = left.line("the system prompt")
        if line not in said:
            said.add(line)
            notices.say("bingo", line, "warning")
    return prompt.text


def _editor_sessions(
    *,
    registry: Registry,
    settings: Settings,
    gate: Gate,
    hooks: Hooks,
    notices: Notices,
    data_dir: Path,
    project: Path,
    environ: dict[str, str],
    choose: ChooseModel,
    plugins_command: Command,
    sandbox_command: Command,
) -> MakeSession:
    """The maker of each ACP session's run, as `_rooms` makes a room's: its own session (stored
    under the id the editor was given) and conversation, in the cwd the editor named, over the
    run's one registry, gate, hooks and plugins. There is no /exit: the editor ends a session."""
    from .surfaces.acp import SessionRun

    current: contextvars.ContextVar[tuple[Conversation, _LazySession]] = contextvars.ContextVar("bingo_acp_run")
    said: set[str] = set()  # the instruction files left out, named once a run however many sessions
    for command in (
        HelpCommand(registry),
        ToolsCommand(registry, gate),
        CompactCommand(lambda: current.get()[0].compact("manual")),
        plugins_command,
        sandbox_command,
    ):
        registry.add_command(command)
    registry.add_command(SessionsCommand(lambda: current.get()[1].store.sessions(str(project))))
    registry.add_command(
        ClearCommand(
            lambda: _clear_in_place(*current.get()),
            said="a fresh conversation starts with your next prompt: the model sees nothing before it (this thread keeps it)",
        )
    )

    def make(surface: Surface, cwd: str, session_id: str, stored: bool) -> SessionRun:
        session = _LazySession(data_dir / "sessions.db", str(project), planned=None if stored else session_id)
        messages: list[Message] = []
        if stored:
            from .store import load_session

            try:
                # By its whole id, and this run's alone (ADR-0029); SessionError: the editor is told.
                session.id = load_session(
                    session.store, session_id, str(project), lambda line: notices.say("bingo", line, "warning")
                )
                messages = history(session.store.frames(session.id))
            except SessionError:
                session.close()
                raise
        system = _system_prompt(notices, said, cwd=Path(cwd), project=project, home=bingo_home(environ))
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
            cwd=cwd,
            messages=messages,
            system=system,
            windows=_windows,
        )
        dispatcher = Dispatcher(
            registry=registry,
            conversation=conversation,
            session=session,
            choose_model=choose,
            help_hint="/help lists them",
        )
        run = Run(
            dispatcher=dispatcher,
            conversation=conversation,
            session=session,
            surface=surface,
            data_dir=data_dir,
            hooks=hooks,
        )
        conversation.on_always = run.remember
        notices.listen(
            lambda notice: (
                session.notice(notice) if (here := current.get(None)) is not None and here[1] is session else None
            )
        )
        run.started()

        async def submit(text: str, images: list[ImageBlock]) -> Submitted:
            current.set((conversation, session))  # in the prompt's own task
            try:
                return await dispatcher.submit(text, images)
            finally:
                notices.flush()

        def close() -> None:
            run.ended()
            session.close()

        return SessionRun(
            submit=submit,
            interrupt=dispatcher.interrupt,
            commands=dispatcher.commands,
            frames=lambda: session.store.frames(session.id) if session.id else [],
            close=close,
        )

    return make


def _clear_in_place(conversation: Conversation, session: _LazySession) -> None:
    """`/clear` in an editor's session, whose id is the editor's to keep (ADR-0037): the
    conversation starts afresh in the same stored session, after a compaction to nothing
    (`reason` "clear"), so the model sees nothing before it and a load replays it all."""
    from .wire import Compaction

    if session.id is not None and conversation.messages:
        session.append(
            CompactionFrame(compaction=Compaction(messages=[]), turn=conversation.turn, reason="clear", by="/clear")
        )
    conversation.messages = []
    conversation.pieces = []


def _editor_mcp(
    stack: contextlib.AsyncExitStack,
    *,
    registry: Registry,
    notices: Notices,
    settings: Settings,
    data_dir: Path,
    plugins: set[str],
    sandbox: Sandbox,
) -> HostMcp:
    """The host of the MCP servers an editor passes with its sessions: each a plugin of this
    run (the user's own, as the editor's settings are), its tools untrusted and under the
    gate like every plugin's, started once however many sessions pass it, and stopped when
    the run ends (`stack`). A server named like one of this run's `plugins`, or like a plugin
    an allow rule names, is not started: its tools would be that plugin's names, and the
    person's rules for that plugin would allow them (ADR-0026)."""
    from .bridge import McpServer, PluginHost, PluginSource, check_name, mcp_manifest, named_plugin
    from .kernel.gate import parse_rule

    hosted: dict[str, McpServerSpec] = {}
    refused: set[str] = set()  # said once a run, however many sessions pass them
    ruled = {name for rule in settings.permissions.allow if (name := named_plugin(parse_rule(rule).tool)) is not None}

    def taken(name: str) -> str | None:
        if name in plugins:
            return f"bingo has a plugin named {name} already, and its permission rules would apply to this server's tools; rename the server in the editor's settings"
        if name in ruled:
            return f"an allow rule names a plugin {name} (plugin__{name}__…), and it would allow this server's tools; rename the server in the editor's settings"
        return None

    async def host(servers: list[McpServerSpec], cwd: str) -> None:
        fresh: list[PluginSource] = []
        for spec in servers:
            known = hosted.get(spec.name)
            problem = check_name(spec.name) or taken(spec.name)
            if known == spec or spec.name in refused:
                continue
            if known is not None or problem is not None:
                why = problem or "one of that name runs already, as the editor first passed it"
                if problem is not None:
                    refused.add(spec.name)
                notices.say("bingo", f"the editor's MCP server {spec.name} is not started: {why}", "warning")
                continue
            hosted[spec.name] = spec
            server = McpServer(
                command=spec.command,
                args=list(spec.args),
                env=dict(spec.env),
                url=spec.url,
                headers=dict(spec.headers),
                type="http" if spec.url else None,
            )
            fresh.append(
                PluginSource(
                    name=spec.name,
                    layer="user",
                    root=Path(cwd),
                    manifest=mcp_manifest(spec.name, server),
                    problem=None,
                    base=Path(cwd),
                )
            )
        if fresh:
            plugins_host = await stack.enter_async_context(
                PluginHost(
                    sources=fresh,
                    registry=registry,
                    notices=notices,
                    settings=settings,
                    data_dir=data_dir,
                    cwd=Path(cwd),
                    cache=False,
                    sandbox=sandbox,
                )
            )
            await plugins_host.start()

    return host


def _dry_run(registry: Registry, conversation: Conversation) -> Callable[[str, Json], Awaitable[ToolOutput | None]]:
    """What a call would do, with nothing written, in the conversation's session and working
    directory (`tools.preview`: `edit` and `write` say; other tools None): what a permission
    question shows (ADR-0034)."""
    from .tools import preview

    async def dry_run(name: str, input: Json) -> ToolOutput | None:
        call = ToolCall(
            call_id="preview", input=input, cwd=conversation.cwd, session=conversation.session, turn=conversation.turn
        )
        return await preview(registry.tools.get(name), call)

    return dry_run


def _surface(options: Options, interactive: bool) -> Surface:
    if options.acp:
        from .surfaces.acp import AcpLog

        return AcpLog()
    if options.channel is not None:
        from .surfaces.channel import ChannelLog

        return ChannelLog()
    if interactive:
        from .surfaces.terminal import TerminalSurface

        return TerminalSurface()
    return PrintSurface()


class Run(msgspec.Struct):
    """The run behind a surface (its `Driver`): what the person submits goes to the kernel's
    dispatcher, and what became of it is shown on the surface; plus what the terminal's own
    commands and the gate's "always" need of this run (`clear`, `sessions`, `remember`)."""

    dispatcher: Dispatcher
    conversation: Conversation
    session: _LazySession
    surface: Surface
    data_dir: Path
    hooks: Hooks
    unsent: str | None = None
    """What the person submitted last, when a `prompt.submit` hook refused the prompt it
    made (the terminal puts it back in the input); taken by `take_unsent`."""

    def take_unsent(self) -> str | None:
        """The last submission a prompt hook refused, once (None when there is none)."""
        unsent, self.unsent = self.unsent, None
        return unsent

    def session_id(self) -> str | None:
        """The session this run writes to, once it has one."""
        return self.session.id

    def busy(self) -> bool:
        return self.dispatcher.busy()

    def commands(self) -> list[CommandSpec]:
        return self.dispatcher.commands()

    async def complete(self, name: str, partial: str) -> list[Completion]:
        return await self.dispatcher.complete(name, partial)

    def interrupt(self) -> list[str]:
        return self.dispatcher.interrupt()

    def started(self) -> None:
        """Tell the `session.start` hooks that this run's session starts (its id, or "" for
        one the first prompt will make)."""
        self.hooks.observe("session", "start", {"session": self.session.id or ""})

    def ended(self) -> None:
        """Tell the `session.end` hooks that this run's session ends: at the run's close, and
        when `/clear` or `/resume` leaves it for another."""
        self.hooks.observe("session", "end", {"session": self.session.id or ""})

    def clear(self) -> None:
        """Start a new session with the next prompt (`/clear`), letting this one go: the
        hooks see this one end and the next start, as at a run's close and start."""
        self.ended()
        if self.session.id is not None:
            self.session.store.release(self.session.id)
        self.session.id, self.session.turn = None, 0
        self.conversation.messages, self.conversation.turn, self.conversation.session = [], 0, ""
        self.conversation.pieces = []  # /context speaks of the new session's turns only
        self.started()

    def sessions(self) -> list[SessionInfo]:
        """This project's sessions, the latest first (`/sessions`)."""
        return self.session.store.sessions(self.session.project)

    def resume(self, session: str) -> tuple[str, list[Message], tuple[int, int]]:
        """Continue `session` (an id or a unique prefix, of this project) from the next prompt
        (`/resume`), letting the current one go: its id, its history and what a compaction
        made of it (`_compacted`).

        Raises:
            SessionError: no such session in this project, or another run writes it.
        """
        store, project = self.session.store, self.session.project
        found = store.find(session, project)
        if store.info(found).project != project:
            raise SessionError(
                f"session {found} belongs to another project, {store.info(found).project}",
                f"continue it there, or here with bingo --resume {found}",
            )
        switched = found != self.session.id
        if switched:
            store.claim(found)  # before letting the current one go: a refusal leaves it as it was
            self.ended()
            if self.session.id is not None:
                store.release(self.session.id)
        frames = store.frames(found)
        past = history(frames)
        self.session.id, self.session.turn = found, 0
        self.conversation.messages, self.conversation.turn, self.conversation.session = past, 0, found
        self.conversation.pieces = []
        if switched:
            self.started()
        return found, past, _compacted(frames)

    def remember(self, rule: str) -> None:
        """Append `rule` to `permissions.allow` in `<project>/.bingo/settings.local.json`
        (a "yes, always"), merged into what the file holds, written atomically, and kept
        trusted as written (`trust.keep_written`)."""
        self._save_local(("permissions", "allow"), rule, rule)

    def remember_host(self, who: str, host: str) -> None:
        """Save the host an "always" answered for `who` (`bash`: `sandbox.network.allow`; a
        plugin: `plugins.<who>.sandbox.network`) in `settings.local.json`, as `remember` does."""
        keys = ("sandbox", "network", "allow") if who == "bash" else ("plugins", who, "sandbox", "network")
        self._save_local(keys, host, f"the host {host} for {who}")

    def _save_local(self, keys: tuple[str, ...], value: str, what: str) -> None:
        """Append `value` to the list at `keys` in `<project>/.bingo/settings.local.json`
        (`bridge.save_local`), and say what became of it."""
        from .bridge import save_local

        for notice in save_local(Path(self.session.project), self.data_dir, keys, value, one_line(what)):
            self.surface.notice(notice)

    async def submit(self, text: str) -> int:
        """Run a slash command or a model turn, and show what became of it; the exit status."""
        try:
            submitted = await self.dispatcher.submit(text)
            if submitted.outcome is not None:
                self.surface.outcome(submitted.outcome)
            turn = submitted.turn
            self.unsent = text if turn is not None and turn.unsent else None
            if turn is not None and turn.status != "done":
                self.surface.end()
                self.surface.notice(Notice(source="bingo", message=turn.reason, level="error"))
            return submitted.status
        finally:
            # The notices a plugin raised past its limit are said as one line per plugin.
            self.conversation.notices.flush()
            self.surface.end()

    async def submit_with_interrupts(self, text: str) -> int:
        """`submit`, with Ctrl-C interrupting the turn: the first sends the cancels and waits
        for the answers (the seed's promise); a second stops waiting for them."""
        loop = asyncio.get_running_loop()
        interrupts = 0

        def on_sigint() -> None:
            nonlocal interrupts
            interrupts += 1
            if interrupts == 1:
                if self.interrupt():
                    self.surface.waiting(
                        "still waiting for the interrupted calls to answer: Ctrl-C again stops waiting"
                    )
                return
            stopped = self.interrupt()
            if stopped:
                self.surface.waiting(f"stopped waiting for {', '.join(stopped)}")

        loop.add_signal_handler(signal.SIGINT, on_sigint)
        try:
            return await self.submit(text)
        finally:
            loop.remove_signal_handler(signal.SIGINT)


async def _check_plugin(
    options: Options,
    where: str,
    *,
    settings: Settings,
    home: Path,
    project: Path,
    cwd: Path,
    data_dir: Path,
    environ: dict[str, str],
) -> int:
    """`--check-plugin DIR` (a plugin's directory, or one holding a `.mcp.json`) or
    `--check-plugin FILE` (a `.mcp.json`): the report on stdout, escaped (it quotes the
    plugin's own words, §8); 0 when no check failed, 1 otherwise."""
    from .bridge import MCP_JSON
    from .bridge.check import check_mcp_json, check_plugin

    path = Path(where)
    if path.is_dir() and not (path / "plugin.json").exists() and (path / MCP_JSON).is_file():
        path = path / MCP_JSON  # a project's directory: the servers its .mcp.json declares
    if not path.is_dir() and not path.is_file():
        raise UsageError(
            f"{where} is neither a directory nor a file",
            "pass the plugin's directory (the one holding its plugin.json) or a .mcp.json",
        )
    path = path.absolute()
    if path.is_file() and path.name == "plugin.json":
        raise UsageError(f"{where} is a plugin's manifest", f"pass its directory: bingo --check-plugin {path.parent}")
    if path.is_file():
        # Run as bingo would in the project that holds the file: from `cwd` when it is inside.
        project = path.parent
        if not cwd.absolute().is_relative_to(project):
            cwd = project
    # Run as bingo would run it: confined, where the sandbox is in force.
    notices = Notices()
    notices.listen(lambda notice: print(escape(f"bingo: {notice.message}"), file=sys.stderr))
    user_home = Path(environ.get("HOME") or Path.home())
    sandbox = _sandbox(settings, user_home=user_home, home=home, project=project, environ=environ, notices=notices)
    async with sandbox:
        if path.is_file():
            report: McpJsonReport | Report = await check_mcp_json(
                path,
                call=options.check_call,
                settings=settings,
                home=home,
                cwd=cwd,
                data_dir=data_dir,
                environ=environ,
                sandbox=sandbox,
            )
        else:
            report = await check_plugin(
                path,
                call=options.check_call,
                settings=settings,
                home=home,
                project=project,
                cwd=cwd,
                data_dir=data_dir,
                environ=environ,
                sandbox=sandbox,
            )
    sys.stdout.write(report.json() if options.check_json else escape(report.text()))
    return 0 if report.ok else 1
