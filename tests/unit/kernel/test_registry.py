"""The registry's refusals (a name already taken, a name that is bingo's own, a hook
declaration that names no valid site and points), unregistering by owner, and its views."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from bingo.bridge import PluginsCommand
from bingo.kernel.commands import CompactCommand, ContextCommand, HelpCommand, ModelCommand, ToolsCommand
from bingo.kernel.interfaces import Command, CommandContext, ToolCall
from bingo.kernel.notices import Notices
from bingo.kernel.registry import BUILTIN, BUILTIN_COMMANDS, BUILTIN_TOOLS, Places, Registry
from bingo.store import SessionInfo
from bingo.surfaces import EXIT_COMMANDS, ClearCommand, ExitCommand, SessionsCommand
from bingo.surfaces.terminal import ResultCommand, ResumeCommand, TerminalSurface
from bingo.tools import builtin_tools
from bingo.wire import (
    CommandOutcome,
    CommandSpec,
    Completion,
    ContextPiece,
    ContextQuery,
    ContributorSpec,
    HookOutcome,
    HookSpec,
    Json,
    Message,
    NoneOutcome,
    Notice,
    ServiceSpec,
    ToolOutput,
    ToolSpec,
    ToolTraits,
)


@dataclass
class FakeCommand:
    name: str
    source: str = "zplug"

    @property
    def spec(self) -> CommandSpec:
        return CommandSpec(name=self.name, hint="a fake")

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        return NoneOutcome()

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []


@dataclass
class FakeTool:
    name: str
    source: str = "zplug"
    traits: ToolTraits = field(default_factory=ToolTraits)

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name)

    async def call(self, call: ToolCall) -> ToolOutput:
        return ToolOutput(parts=[])


@dataclass
class FakeHook:
    spec: HookSpec
    source: str = "zplug"

    async def decide(self, point: str, payload: Json) -> HookOutcome:
        return HookOutcome(outcome="continue")

    async def observe(self, point: str, payload: Json) -> None:
        return None


def registry() -> tuple[Registry, list[Notice]]:
    notices = Notices()
    said: list[Notice] = []
    notices.listen(said.append)
    return Registry(notices), said


def hook(name: str, site: str = "tool", points: tuple[str, ...] = ("before",), source: str = "zplug") -> FakeHook:
    return FakeHook(HookSpec(name=name, site=site, points=list(points)), source)


@dataclass
class FakeContributor:
    name: str
    source: str = "zplug"

    @property
    def spec(self) -> ContributorSpec:
        return ContributorSpec(name=self.name)

    async def contribute(self, query: ContextQuery) -> list[ContextPiece]:
        return []


@dataclass
class FakeService:
    key: str
    source: str = "zplug"

    @property
    def spec(self) -> ServiceSpec:
        return ServiceSpec(key=self.key, methods=[])

    async def call(self, method: str, params: Json) -> Json:
        return None


# --- bingo's own names -----------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(BUILTIN_COMMANDS))
def test_a_plugins_command_of_a_builtin_name_is_refused_before_the_builtin_registers(name: str) -> None:
    reg, said = registry()

    assert not reg.add_command(FakeCommand(name))
    assert reg.add_command(FakeCommand(name, source=BUILTIN))

    assert reg.commands[name].source == BUILTIN
    assert [(n.source, n.message, n.level) for n in said] == [
        ("zplug", f"command '/{name}' refused: /{name} is bingo's own command; rename it", "warning")
    ]


def test_a_plugins_command_of_a_builtin_name_is_refused_after_the_builtin_too() -> None:
    reg, said = registry()

    assert reg.add_command(FakeCommand("tools", source=BUILTIN))
    assert not reg.add_command(FakeCommand("tools"))

    assert [n.message for n in said] == ["command '/tools' refused: /tools is bingo's own command; rename it"]


@pytest.mark.parametrize("name", sorted(BUILTIN_TOOLS))
def test_a_tool_of_a_builtin_name_that_is_not_bingos_is_refused(name: str) -> None:
    reg, said = registry()

    assert not reg.add_tool(FakeTool(name))
    assert reg.add_tool(FakeTool(name, source=BUILTIN))

    assert reg.tools[name].source == BUILTIN
    assert [(n.source, n.message) for n in said] == [
        ("zplug", f"tool {name!r} refused: {name} is bingo's own tool; rename it")
    ]


def test_other_names_are_first_come_first_kept() -> None:
    reg, said = registry()

    assert reg.add_command(FakeCommand("wordcount"))
    assert not reg.add_command(FakeCommand("wordcount", source="other"))

    assert [(n.source, n.message) for n in said] == [
        ("other", "command '/wordcount' is already provided by zplug; this one is not used")
    ]


class _Keeper:
    def clear(self) -> None: ...

    def sessions(self) -> list[SessionInfo]:
        return []

    def resume(self, session: str) -> tuple[str, list[Message], tuple[int, int]]:
        return session, [], (0, 0)


def _default_spec(cls: type) -> CommandSpec:
    spec: object = getattr(cls, "spec")  # noqa: B009
    assert isinstance(spec, CommandSpec)
    return spec


def terminal_commands(keeper: _Keeper, surface: TerminalSurface) -> list[Command]:
    """The terminal's own commands, as the run's table makes them (`bingo.run.TABLE`)."""
    return [ClearCommand(keeper.clear), ResultCommand(surface), ResumeCommand(keeper, surface)]


def test_every_builtin_command_and_tool_has_a_reserved_name() -> None:
    # A new built-in must be reserved too, or a plugin that got there first would take its name.
    kernel = [
        _default_spec(cls)
        for cls in (HelpCommand, ToolsCommand, CompactCommand, ContextCommand, ModelCommand, PluginsCommand)
    ]
    terminal = [command.spec for command in terminal_commands(_Keeper(), TerminalSurface())]
    terminal += [SessionsCommand(list).spec] + [ExitCommand.named(name).spec for name in EXIT_COMMANDS]

    assert {spec.name for spec in kernel + terminal} <= BUILTIN_COMMANDS
    assert all(command.source == BUILTIN for command in terminal_commands(_Keeper(), TerminalSurface()))
    assert {tool.name for tool in builtin_tools()} <= BUILTIN_TOOLS
    assert all(tool.source == BUILTIN for tool in builtin_tools())


# --- hooks -----------------------------------------------------------------------------


def test_a_hook_with_no_valid_site_and_points_is_refused_with_the_pairs_named() -> None:
    reg, said = registry()

    assert not reg.add_hook(hook("guard", site="tool.before"))

    assert list(reg.hooks) == []
    assert [(n.source, n.message, n.level) for n in said] == [
        (
            "zplug",
            "hook guard refused: site 'tool.before' is not a site; a hook names one site and its points: "
            "tool (before, after), prompt (submit), command (before), turn (start, end), session (start, end)",
            "warning",
        )
    ]


def test_hooks_register_in_order_or_where_the_ones_they_replace_were() -> None:
    reg, said = registry()
    first, second, again = hook("first"), hook("second"), hook("again", site="turn", points=("start",))

    assert reg.add_hook(first) and reg.add_hook(second)
    assert reg.add_hook(again, Places(hook=1))

    assert list(reg.hooks) == [first, again, second]
    assert said == []


# --- unregistering by owner ------------------------------------------------------------


def test_unregister_drops_everything_its_owner_contributed_and_nothing_else() -> None:
    reg, said = registry()
    reg.add_tool(FakeTool("plugin__alpha__echo", source="alpha"))
    reg.add_tool(FakeTool("plugin__beta__echo", source="beta"))
    reg.add_command(FakeCommand("alpha-cmd", source="alpha"))
    reg.add_contributor(FakeContributor("a", source="alpha"))
    reg.add_hook(hook("a", source="alpha"))
    reg.add_hook(hook("b", source="beta"))
    reg.add_service(FakeService("alpha.files", source="alpha"))

    places = reg.unregister("alpha")

    assert sorted(reg.tools) == ["plugin__beta__echo"]
    assert dict(reg.commands) == {} and list(reg.contributors) == [] and dict(reg.services) == {}
    assert [h.spec.name for h in reg.hooks] == ["b"]
    assert places == Places(contributor=0, hook=0)
    assert said == []


def test_what_replaces_an_owners_hooks_and_contributors_keeps_their_place_in_the_run_order() -> None:
    reg, _ = registry()
    for owner in ("alpha", "beta", "gamma"):
        reg.add_hook(hook(f"{owner}-1", source=owner))
        reg.add_hook(hook(f"{owner}-2", source=owner))
        reg.add_contributor(FakeContributor(owner, source=owner))

    at = reg.unregister("beta")
    reg.add_hook(hook("beta-new-1", source="beta"), at)
    reg.add_hook(hook("beta-new-2", source="beta"), at)
    reg.add_contributor(FakeContributor("beta-new", source="beta"), at)

    assert [h.spec.name for h in reg.hooks] == ["alpha-1", "alpha-2", "beta-new-1", "beta-new-2", "gamma-1", "gamma-2"]
    assert [c.spec.name for c in reg.contributors] == ["alpha", "beta-new", "gamma"]


def test_an_owner_that_had_no_hooks_has_its_new_ones_run_last() -> None:
    reg, _ = registry()
    reg.add_hook(hook("first", source="alpha"))

    at = reg.unregister("beta")
    reg.add_hook(hook("new", source="beta"), at)

    assert at == Places(contributor=None, hook=None)
    assert [h.spec.name for h in reg.hooks] == ["first", "new"]


def test_a_name_an_owner_gave_up_is_free_and_a_clash_names_the_keeper() -> None:
    reg, said = registry()
    reg.add_command(FakeCommand("shared", source="alpha"))
    assert not reg.add_command(FakeCommand("shared", source="beta"))

    reg.unregister("alpha")

    assert reg.add_command(FakeCommand("shared", source="beta"))
    assert reg.commands["shared"].source == "beta"
    assert [n.message for n in said] == ["command '/shared' is already provided by alpha; this one is not used"]


# --- registering -----------------------------------------------------------------------


def test_a_tool_registered_by_name_is_not_asked_its_spec() -> None:
    @dataclass
    class Lazy:
        source: str = BUILTIN
        traits: ToolTraits = field(default_factory=ToolTraits)

        @property
        def spec(self) -> ToolSpec:
            raise AssertionError("the spec of a built-in imports its module")

        async def call(self, call: ToolCall) -> ToolOutput:
            return ToolOutput(parts=[])

    reg, _ = registry()

    assert reg.add_tool(Lazy(), name="read")
    assert not reg.add_tool(FakeTool("read"))
    reg.unregister(BUILTIN)

    assert dict(reg.tools) == {}


def test_a_plugins_service_key_in_bingos_namespace_is_refused() -> None:
    reg, said = registry()

    assert not reg.add_service(FakeService("bingo.mine"))
    assert reg.add_service(FakeService("bingo.mine", source=BUILTIN))

    assert [(n.source, n.message) for n in said] == [
        ("zplug", "service 'bingo.mine' refused: keys starting 'bingo.' are reserved for the host")
    ]


def test_what_the_registry_holds_is_read_through_views_that_follow_it() -> None:
    reg, _ = registry()
    hooks, tools = reg.hooks, reg.tools

    reg.add_hook(hook("late"))
    reg.add_tool(FakeTool("plugin__zplug__t"))

    assert [h.spec.name for h in hooks] == ["late"] and list(tools) == ["plugin__zplug__t"]
    assert not hasattr(reg.tools, "__setitem__") and not hasattr(reg.hooks, "append")
