"""The registry's refusals: a name already taken, a name that is bingo's own, and a hook
declaration that names no valid site and points."""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec
import pytest

from bingo.bridge import PluginsCommand
from bingo.kernel.commands import CompactCommand, HelpCommand, ToolsCommand
from bingo.kernel.interfaces import CommandContext, ToolCall
from bingo.kernel.notices import Notices
from bingo.kernel.registry import BUILTIN, BUILTIN_COMMANDS, BUILTIN_TOOLS, Registry
from bingo.store import SessionInfo
from bingo.surfaces.terminal import terminal_commands
from bingo.tools import builtin_tools
from bingo.wire import (
    CommandOutcome,
    CommandSpec,
    Completion,
    HookOutcome,
    HookSpec,
    Json,
    Notice,
    NoneOutcome,
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


def hook(name: str, site: str = "tool", points: tuple[str, ...] = ("before",)) -> FakeHook:
    return FakeHook(HookSpec(name=name, site=site, points=list(points)))


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
    assert [(n.source, n.message) for n in said] == [("zplug", f"tool {name!r} refused: {name} is bingo's own tool; rename it")]


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


def _default_spec(cls: type[msgspec.Struct]) -> CommandSpec:
    [spec] = [f.default for f in msgspec.structs.fields(cls) if f.name == "spec"]
    assert isinstance(spec, CommandSpec)
    return spec


def test_every_builtin_command_and_tool_has_a_reserved_name() -> None:
    # A new built-in must be reserved too, or a plugin that got there first would take its name.
    kernel = [_default_spec(cls) for cls in (HelpCommand, ToolsCommand, CompactCommand, PluginsCommand)]
    terminal = [command.spec for command in terminal_commands(_Keeper())]

    assert {spec.name for spec in kernel + terminal} <= BUILTIN_COMMANDS
    assert all(command.source == BUILTIN for command in terminal_commands(_Keeper()))
    assert {tool.name for tool in builtin_tools()} <= BUILTIN_TOOLS
    assert all(tool.source == BUILTIN for tool in builtin_tools())


# --- hooks -----------------------------------------------------------------------------


def test_a_hook_with_no_valid_site_and_points_is_refused_with_the_pairs_named() -> None:
    reg, said = registry()

    assert not reg.add_hook(hook("guard", site="tool.before"))

    assert reg.hooks == []
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
    assert reg.add_hook(again, 1)

    assert reg.hooks == [first, again, second]
    assert said == []
