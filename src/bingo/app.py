"""The composition of one bingo process: settings, plugins, registry, gate, hooks and the
model choice, made once; then a command (`--trust`, `--check-plugin`) or the surface asked
for, served its runs by the run factory (`bingo.run`: `run/_serve.py` says what each surface
is given).

Owns the process's lifetime (`async with` for the sandbox, the plugin host and the hooks, so
every plugin process is gone when it returns) and the choice of surface. It does not parse
the command line (`cli.py`), does not make a conversation's run (`run.RunFactory` does) nor
serve a surface (`run/_serve.py`), does not read what the person brings (`run/_brought.py`),
does not dispatch what the person submits (`kernel.dispatch` does) and draws nothing (the
surface does). `bingo mcp login|logout` and `--check-plugin` open no run: `checkup.py`.

Start-up is on the path of every `bingo -p "/command"`, so it does only what the run needs,
in an order that lets a plugin start early (issue 6): the session store is opened only when
a session is continued or a first frame is written; built-in tools are registered by name
and imported when first used (their specs are data); with a warm declaration cache no plugin
is started at all until it is used, and the plugin behind a command given on the command
line is started as soon as its declaration is known, so its interpreter starts while bingo
finishes its own (ADR-0043).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import msgspec

from .kernel.errors import TrustError, UsageError
from .kernel.gate import Gate, rule_problems
from .kernel.home import data_dir as data_dir_of
from .kernel.hooks import Hooks
from .kernel.interfaces import Asker
from .kernel.log import setup_logging
from .kernel.notices import Notices
from .kernel.registry import Registry
from .kernel.settings import (
    bingo_home,
    fail_closed_problems,
    find_project,
    read_settings,
    unsafe_layers,
)
from .run import (
    AgentTool,
    ModelChooser,
    RunFactory,
    RunSession,
    bring_in,
    serve_editor,
    serve_rooms,
    serve_run,
    serve_script,
    start_sandbox,
    take_up,
)
from .surfaces import PrintSurface, Surface, escape
from .wire import Json

__all__ = ["Options", "run_app"]


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
    output_format: str = "text"
    """`--output-format`: text, json or stream-json (INTERFACE.md §13, surfaces.script)."""
    json_schema: str | None = None
    """`--json-schema`: the schema the answer must meet (inline JSON or a file)."""
    max_turns: int | None = None
    """`--max-turns`: at most this many model requests in the run."""


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
    # Each file read once: merged as if untrusted first (every layer is checked, and what
    # trust would add is known), then as trusted from the same bytes once the person says so.
    files = read_settings(home=home, project=project, overrides=_overrides(options))
    settings = files.merged(project_trusted=False)
    if options.channel is not None and settings.matrix.cwd:
        cwd = _enter(settings.matrix.cwd)  # the channel's directory is the project
        project = find_project(cwd, user_home)
        files = read_settings(home=home, project=project, overrides=_overrides(options), user=files)
        settings = files.merged(project_trusted=False)
    if options.channel is not None:
        os.environ.pop(
            settings.matrix.access_token_env, None
        )  # the bot's token is bingo's: no plugin inherits it (`environ` keeps it)
    data_dir = data_dir_of(home)
    setup_logging(data_dir)
    if options.check_plugin is not None:
        from .checkup import check_plugin

        return await check_plugin(
            options.check_plugin,
            call=options.check_call,
            json=options.check_json,
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
    schema = None
    if options.json_schema is not None:
        from .surfaces.script import read_schema

        schema = read_schema(options.json_schema, cwd)  # bad usage before any plugin starts
    surface = _surface(options, interactive)

    from .bridge import PluginHost, admitted, ask_trust, left_out_notice, trust_summary
    from .tools import builtin_tools

    notices = Notices(kept_in=str(data_dir / "logs" / "bingo.log"))
    shown = notices.listen(surface.notice)
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
        settings = files.merged(project_trusted=True)
    if state.pending:
        notices.say("bingo", left_out_notice(state, sources), "warning")
    run_sources, listed = admitted(sources, state)
    sandbox = start_sandbox(settings, user_home=user_home, home=home, project=project, environ=environ, notices=notices)
    registry = Registry(notices)
    for tool in builtin_tools(str(project), sandbox=sandbox):
        # By name: reading a built-in's spec would import its module, which only a model
        # turn needs.
        registry.add_tool(tool, name=tool.name)
    agent_tool = AgentTool()  # its factory is set once made (INTERFACE.md §15)
    registry.add_tool(agent_tool, name="agent")
    gate = Gate(settings.permissions, project=str(project), sandboxed=sandbox.in_force)
    choose_model = ModelChooser(settings, registry, environ)  # the process's one: closed below
    session = RunSession(data_dir / "sessions.db", str(project))
    if options.output_format != "text":
        from .store import new_session_id

        session.planned = new_session_id()  # a script's init line names it before the first frame
    if options.prompt is not None and not interactive and not options.prompt.startswith("/"):
        # What the first request needs and start-up does not, on threads beside what follows
        # (ADR-0043): the providers' SSL context, and the session store it writes the prompt to.
        choose_model.prepare()
        session.prepare()
    try:
        await take_up(
            session,
            latest=options.continue_latest,
            resume=options.resume,
            ask=_start_asker() if interactive else None,
            notices=notices,
        )
        recording = notices.listen(session.notice)  # until its run listens (the plugins' start is the session's)
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
            plugins.sign_ins.interactive = interactive  # asked on the terminal, once it is up (§14)
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
            # Begun is not started: a begun plugin's task spawns it at its first step, which
            # the loop would take at this coroutine's next wait, after the rest of start-up
            # (90 ms on a loaded machine, the first request then on its way). One step now,
            # and its interpreter starts beside bingo's own start-up (ADR-0043).
            await asyncio.sleep(0)
            brought_commands = bring_in(
                registry,
                notices,
                settings,
                sandbox,
                home=home,
                user_home=user_home,
                project=project if state.trusted and project != user_home.resolve() else None,
                workdir=project,
                mcp={s.name for s in sources if s.manifest is not None and s.manifest.mcp is not None},
            )
            async with Hooks(
                registry.hooks, notices, settings.deadline("hook/decide"), fail_closed=settings.fail_closed
            ) as hooks:
                shown()  # the factory shows the notices from now on, each where it belongs
                factory = RunFactory(
                    registry=registry,
                    settings=settings,
                    gate=gate,
                    hooks=hooks,
                    notices=notices,
                    sandbox=sandbox,
                    plugins=plugins,
                    trust=trust_summary(state),
                    choose_model=choose_model,
                    data_dir=data_dir,
                    project=project,
                    home=home,
                    log=surface,
                    brought=brought_commands[0],
                    brought_commands=brought_commands[1],
                )
                agent_tool.factory = factory
                if options.channel is not None:
                    return await serve_rooms(factory, cwd=cwd, environ=environ)
                if options.acp:
                    from .surfaces.acp import AcpLog

                    assert isinstance(surface, AcpLog)  # chosen above for --acp
                    return await serve_editor(factory, surface, plugins={source.name for source in sources})
                if options.output_format != "text":
                    from .surfaces.script import ScriptSurface

                    assert isinstance(surface, ScriptSurface) and options.prompt is not None  # chosen above
                    return await serve_script(
                        factory,
                        surface,
                        options.prompt,
                        session=session,
                        recording=recording,
                        max_turns=options.max_turns,
                        schema=schema,
                        cwd=cwd,
                        plugins=[source.name for source in run_sources],
                    )
                return await serve_run(
                    factory,
                    surface,
                    options.prompt,
                    interactive=interactive,
                    session=session,
                    recording=recording,
                    max_turns=options.max_turns,
                    cwd=cwd,
                    user_home=user_home,
                )
    finally:
        await choose_model.aclose()  # the providers' HTTP clients (ADR-0040)
        session.close()


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


def _surface(options: Options, interactive: bool) -> Surface:
    if options.acp:
        from .surfaces.acp import AcpLog

        return AcpLog()
    if options.channel is not None:
        from .surfaces.channel import ChannelLog

        return ChannelLog()
    if options.output_format in ("json", "stream-json"):
        from .surfaces.script import ScriptSurface

        return ScriptSurface("stream-json" if options.output_format == "stream-json" else "json")
    if interactive:
        from .surfaces.terminal import TerminalSurface

        return TerminalSurface()
    return PrintSurface()
