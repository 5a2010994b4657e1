"""The one place runs are opened: every surface asks the factory for the run of each
conversation it shows (the terminal and `-p` for one, the bot for each room, the ACP agent
for each session, and the `agent` tool for each child conversation, ADR-0049).

Owns what the process's runs share (the registry, gate, hooks, plugins, sandbox, settings
and the model choice, each made once by the app), opening a run (its session, new or
continued; its conversation; bingo's commands of its place, from the table) and routing the
process's notices to the surface of the run whose work raised them. It does not compose the
process (app.py does) and draws nothing (each run's surface does).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..kernel.dispatch import ChooseModel
from ..kernel.errors import ProviderError, SessionError
from ..kernel.frames import AgentFrame, history, live
from ..kernel.gate import Gate
from ..kernel.hooks import Hooks
from ..kernel.notices import Notices
from ..kernel.registry import Registry
from ..kernel.settings import Settings
from ..kernel.system import system_prompt
from ..kernel.turn import Conversation
from ..sandbox import Sandbox
from ..surfaces import Surface
from ..wire import Message, Notice
from ._commands import commands_for
from ._run import Place, Run, current_run
from ._seen import attach
from ._session import RunSession, compacted

if TYPE_CHECKING:
    from ..bridge import PluginHost
    from ..bring import AgentFile, Brought
    from ..checkpoint import Checkpoints
    from ..kernel.interfaces import Command
    from ..surfaces.terminal import Opening
    from ._child import ChildRun

__all__ = ["RunFactory", "opening", "start_sandbox"]

_OWN_TASK: frozenset[Place] = frozenset({"terminal", "print", "room"})
"""The places whose run is opened in a task that is its own for good (the terminal's main
task, a room's worker): what that task raises is the run's from its opening. An editor's
session is opened in a request's task, and its prompts each in their own."""


def start_sandbox(
    settings: Settings, *, user_home: Path, home: Path, project: Path, environ: dict[str, str], notices: Notices
) -> Sandbox:
    """The process's sandbox, its settings' problems said and its mechanism probed.

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


def _windows(provider: str, model: str) -> int | None:
    """The providers' table of context windows, imported when a turn first needs it."""
    from ..providers import context_window

    return context_window(provider, model)


class RunFactory:
    """Opens the runs of one process over what they share. `log` is the process's own
    surface: it shows the notices no run's work raised while no run is running anything
    (at start; a plugin's, between prompts)."""

    __slots__ = (
        "_checkpoints",
        "_making",
        "_open",
        "_said",
        "brought",
        "brought_commands",
        "choose_model",
        "data_dir",
        "gate",
        "home",
        "hooks",
        "log",
        "notices",
        "on_child",
        "plugins",
        "project",
        "registry",
        "sandbox",
        "settings",
        "trust",
    )

    def __init__(
        self,
        *,
        registry: Registry,
        settings: Settings,
        gate: Gate,
        hooks: Hooks,
        notices: Notices,
        sandbox: Sandbox,
        plugins: PluginHost,
        trust: str,
        choose_model: ChooseModel,
        data_dir: Path,
        project: Path,
        home: Path,
        log: Surface,
        brought: Brought | None = None,
        brought_commands: Mapping[str, Command] | None = None,
    ) -> None:
        self.registry = registry
        self.settings = settings
        self.gate = gate
        self.hooks = hooks
        self.notices = notices
        self.sandbox = sandbox
        self.plugins = plugins
        self.trust = trust
        """One line on the project's trust, for `/plugins`."""
        self.choose_model = choose_model
        self.data_dir = data_dir
        self.project = project
        self.home = home
        self.log = log
        self.brought = brought
        """The skills, markdown commands and command hooks the person and a trusted project
        brought (INTERFACE.md §11): the skills' catalogue goes in the system prompt."""
        self.brought_commands: Mapping[str, Command] = brought_commands or {}
        """The slash commands they make (names already checked), offered in every place."""
        self._open: list[Run] = []
        self._checkpoints: Checkpoints | None = None
        self._said: set[str] = set()
        """The instruction files the system prompt left out, named once a process."""
        self._making: asyncio.Lock | None = None
        """Held while a worktree is made: one at a time, so that two children do not race for the
        repository's own lock files (refs, the worktree list)."""
        self.on_child: list[Callable[[ChildRun], None]] = []
        """Called with each child conversation as it opens (before its turn starts): where
        a surface, an editor or the session learns of it (ADR-0049)."""
        self.on_child.append(attach)  # what the person sees of each child, and its frames kept (ADR-0049)
        notices.listen(self._route)

    def system(self, cwd: Path, *, child: bool = False) -> str:
        """The system prompt's text for a conversation in `cwd`; each instruction file it
        leaves out (a link out of its layer, a FIFO, a device) named in one notice, once.
        With the `agent` tool registered, the agents are listed too, except for a `child`
        conversation, which has no `agent` tool."""
        prompt = system_prompt(cwd=cwd, project=self.project, home=self.home)
        for left in prompt.left_out:
            line = left.line("the system prompt")
            if line not in self._said:
                self._said.add(line)
                self.notices.say("bingo", line, "warning")
        sections = [prompt.text]
        if self.brought is not None:
            sections.append(self.brought.catalogue())
            if not child and "agent" in self.registry.tools:
                sections.append(self.brought.agents_catalogue())
        return "\n\n".join(section for section in sections if section)

    def agents(self) -> Mapping[str, AgentFile]:
        """The agent files the person and a trusted project brought, by name."""
        return self.brought.agents if self.brought is not None else {}

    async def child(
        self, parent: Run, *, agent: AgentFile | None, description: str, call_id: str, cwd: str
    ) -> ChildRun:
        """A child conversation of `parent` for its call `call_id` of `agent` (ADR-0049): a
        fresh history; the parent's system prompt plus the agent's instructions; the tools
        the agent names (all the parent's when it names none; never `agent`); the process's
        gate, hooks, sandbox and plugins; the parent's person to ask; in `cwd` (the parent
        call's), or in a new git worktree of it when the agent asks for one. The parent keeps
        it in `children` until `let_go`.

        Raises:
            WorktreeError: the agent asks for a worktree and none can be made (not a git
                repository, no commit yet, git missing).
        """
        from ..bring import offered_tools
        from ._child import GENERAL, ChildRun

        name = agent.name if agent is not None else GENERAL
        where, worktree = Path(cwd), None
        if agent is not None and agent.isolation == "worktree":
            from ._worktree import make_worktree

            self._making = self._making or asyncio.Lock()
            async with self._making:
                worktree, where = await make_worktree(Path(cwd), name)
        system = self.system(Path(cwd), child=True) + "\n\n" + _child_words(name, description, agent)
        offered, unmatched = offered_tools(agent.tools if agent is not None else None, list(self.registry.tools))
        if unmatched:
            self.notices.say_once(
                "bingo",
                f"agent-tools:{name}",
                f"agent {name} names tools this run does not have: {', '.join(unmatched)[:300]}",
            )
        session = parent.session.id or ""

        def conversation(child: ChildRun) -> Conversation:
            made = Conversation(
                registry=self.registry,
                settings=self.settings,
                gate=self.gate,
                hooks=self.hooks,
                notices=self.notices,
                log=child,
                events=child,
                asker=parent.surface,
                session=session,
                cwd=str(where),
                messages=[],
                system=system,
                windows=_windows,
                offered=offered,
                child=True,
            )
            made.on_always = parent.remember
            return made

        child = ChildRun(
            parent=parent,
            name=name,
            description=description,
            call_id=call_id,
            cwd=where,
            choose=parent.chooser,
            model=agent.model if agent is not None else None,
            conversation=conversation,
            worktree=worktree,
        )
        parent.children.append(child)
        for listener in self.on_child:
            listener(child)
        return child

    async def let_go(self, child: ChildRun) -> str:
        """The child's turn is over: its watchers are told, its parent lets it go, and its
        worktree is removed when it left nothing there. Answers what the parent's model is to
        be told of the worktree ("" without one). (What a child spent is counted as it is
        spent, into the parent's, by its frames' watcher: run/_seen.py.)"""
        parent = child.parent
        try:
            child.ended()
        finally:
            if child in parent.children:
                parent.children.remove(child)
        worktree = child.worktree
        if worktree is None:
            return ""
        if await worktree.changed():
            return (
                f"The agent worked in the git worktree {worktree.path} on the branch {worktree.branch}, "
                "which holds its changes (uncommitted ones too): merge or remove it with git."
            )
        problem = await worktree.remove()
        if problem is not None:
            self.notices.say("bingo", f"the worktree {worktree.path} could not be removed: {problem}", "warning")
            return f"The agent changed nothing; its worktree {worktree.path} (branch {worktree.branch}) is left."
        return f"The agent changed nothing, so its worktree and branch {worktree.branch} were removed."

    def checkpoints(self) -> Checkpoints:
        """The project's checkpoints (ADR-0044), made at the first prompt or `/rewind`."""
        if self._checkpoints is None:
            from ..checkpoint import Checkpoints

            self._checkpoints = Checkpoints(
                self.data_dir / "checkpoints",
                self.project,
                lambda line: self.notices.say("bingo", line, "warning"),
                max_bytes=self.settings.checkpoint_max_bytes,
                max_file_bytes=self.settings.checkpoint_max_file_bytes,
                home=Path(os.environ.get("HOME") or Path.home()),
                skip=(self.home,),
            )
        return self._checkpoints

    def session(self, *, planned: str | None = None) -> RunSession:
        """A new session of this project for a run (created on its first frame; under
        `planned`, an editor's id, when given)."""
        return RunSession(self.data_dir / "sessions.db", str(self.project), planned=planned)

    def open(
        self,
        surface: Surface,
        place: Place,
        *,
        cwd: Path | None = None,
        session: RunSession | None = None,
        resume: str | None = None,
        system: str | None = None,
        choose_model: ChooseModel | None = None,
    ) -> Run:
        """A run of `place` shown on `surface`, in `cwd` (the project's by default): on
        `session` (one the caller continued already), or on the stored session `resume` (by
        its whole id, this project's, and claimed for this run: ADR-0029), or on a new one.
        `system` is the system prompt when the caller shares one among its runs;
        `choose_model` the run's own model choice, over the process's (`--max-turns` counts
        its requests through it).

        Raises:
            SessionError: `resume` cannot be continued (in a room: said there, and the room
                starts a new session instead).
        """
        where = cwd or self.project
        session = session or self.session()
        if resume is not None:
            self._continue(session, resume, place, surface)
        messages: list[Message] = history(session.frames()) if session.id is not None else []
        if system is None:
            system = self.system(where)
        conversation = Conversation(
            registry=self.registry,
            settings=self.settings,
            gate=self.gate,
            hooks=self.hooks,
            notices=self.notices,
            log=session,
            events=surface,
            asker=surface,
            session=session.id or "",
            cwd=str(where),
            messages=messages,
            system=system,
            windows=_windows,
        )
        run = Run(
            place=place,
            surface=surface,
            session=session,
            conversation=conversation,
            hooks=self.hooks,
            notices=self.notices,
            data_dir=self.data_dir,
            choose_model=choose_model or self.choose_model,
            commands=lambda run: commands_for(run, self),
            help_hint="bingo -p /help lists them" if place == "print" else "/help lists them",
            solo=place in ("terminal", "print"),
            forget=self._open.remove,
            checkpoints=self.checkpoints,
        )
        if place in _OWN_TASK:
            run.own_task()
        self._open.append(run)
        run.started()
        return run

    def _continue(self, session: RunSession, resume: str, place: Place, surface: Surface) -> None:
        from ..store import load_session

        say: Callable[[str], None] | None = None
        if place == "editor":
            say = lambda line: self.notices.say("bingo", line, "warning")  # noqa: E731
        try:
            session.id = load_session(session.store, resume, str(self.project), say)
        except SessionError as exc:
            if place != "room":
                session.close()
                raise
            session.id = None
            surface.notice(
                Notice(source="bingo", message=f"{exc.line()}; this room starts a new session", level="warning")
            )

    def _route(self, notice: Notice) -> None:
        """A notice of the process, shown where it belongs: on the surface of the run whose
        work raised it; one raised outside every run's work (a plugin's, from the bridge's
        own task) on the surfaces of the runs running something; else on the process's."""
        here = current_run()
        targets = [here] if here is not None and not here.closed else [run for run in self._open if run.submitting]
        if not targets:
            self.log.notice(notice)
        for run in targets:
            run.surface.notice(notice)


def _child_words(name: str, description: str, agent: AgentFile | None) -> str:
    """What a child conversation's system prompt adds to its parent's: that it is a
    subagent whose final text is all its parent gets, and its agent's instructions."""
    words = (
        f"# You are a subagent: {name}\n\nAnother conversation handed you a task ({' '.join(description.split())[:200]}), "
        "in the first message. Nobody reads this conversation as it goes: do the task with your tools, "
        "then end with a final answer that says what you found or did, since that text is all the "
        "conversation that called you gets back."
    )
    if agent is not None and agent.body.strip():
        words += f"\n\n# Agent {agent.name}'s instructions\n\n{agent.body.strip()}"
    return words


def opening(run: Run, choose_model: ChooseModel, *, cwd: Path, home: Path) -> Opening:
    """What the terminal's banner names: the provider and model the first turn will use,
    chosen as that turn will choose them (which builds no client and asks nothing: httpx is
    imported at the first request), or what is wrong and how to set one; and the session the
    run continues, if it does."""
    from .. import __version__
    from ..surfaces.terminal import Opening

    try:
        provider, model = choose_model()
        chosen, unset = (provider.spec.name, model), ""
    except ProviderError as exc:
        chosen, unset = (None, None), exc.line()
    frames = run.frames() if run.session_id() is not None else []
    made = compacted(frames) if frames else (0, 0)
    return Opening(
        version=__version__,
        provider=chosen[0],
        model=chosen[1],
        unset=unset,
        cwd=str(cwd),
        home=str(home),
        session=run.session_id(),
        past=run.conversation.messages,
        compacted=made[0],
        summary=made[1],
        agents=[frame for frame in live(frames) if isinstance(frame, AgentFrame)],
    )
