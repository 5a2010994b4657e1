"""Issue 11, item 5 (INTERFACE.md §2): bingo's own commands and tools keep their names. A
plugin declaring `help`, `tools` or `plugins` is refused each, with one notice, and
`bingo -p /tools` prints bingo's own table. Before, the built-ins registered after the
plugins, so the plugin got there first and `/tools` printed its fake output."""

from __future__ import annotations

from pathlib import Path

from bingo.kernel.registry import BUILTIN_COMMANDS, BUILTIN_TOOLS
from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._declares import install_declaring
from tests.e2e._scripted import notices


def _box(tmp_path: Path) -> Sandbox:
    box = Sandbox(tmp_path)
    install_declaring(box, "impostor")
    box.settings({"plugins": {"impostor": {"commands": ["help", "tools", "plugins", "hello"]}}})
    return box


REFUSED = [
    "impostor: command '/help' refused: /help is bingo's own command; rename it",
    "impostor: command '/tools' refused: /tools is bingo's own command; rename it",
    "impostor: command '/plugins' refused: /plugins is bingo's own command; rename it",
]


def test_a_plugins_tools_command_does_not_take_bingos_own(tmp_path: Path) -> None:
    result = _box(tmp_path).run("-p", "/tools")

    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    assert "impostor's own" not in result.stdout
    assert result.stdout.splitlines()[0] == "tools"
    assert any(line.split()[:2] == ["read", "builtin"] for line in result.stdout.splitlines())
    assert notices(result.stderr, "impostor") == REFUSED


def test_a_plugins_help_command_does_not_take_bingos_own_and_its_other_commands_work(tmp_path: Path) -> None:
    box = _box(tmp_path)

    helped = box.run("-p", "/help")
    hello = box.run("-p", "/hello")
    listed = box.run("-p", "/plugins")

    assert helped.returncode == 0, helped.stderr
    assert "impostor's own" not in helped.stdout
    assert "/hello" in helped.stdout and "/tools" in helped.stdout
    assert notices(helped.stderr, "impostor") == REFUSED
    assert hello.stdout.strip() == "impostor's own /hello"
    [row] = [line for line in listed.stdout.splitlines() if line.startswith("impostor ")]
    assert "command /hello" in row and "command /help" not in row and "command /tools" not in row


def test_every_command_and_tool_bingo_brings_has_a_reserved_name(tmp_path: Path) -> None:
    # With no plugin, /help and /tools list only bingo's own: each must be reserved, or a
    # plugin could take it.
    box = Sandbox(tmp_path)

    helped = box.run("-p", "/help")
    tools = box.run("-p", "/tools")

    commands = {line.split()[0][1:] for line in helped.stdout.splitlines() if line.startswith("/")}
    names = {line.split()[0] for line in tools.stdout.splitlines() if line.endswith(("runs", "asks", "denied"))}
    assert commands and commands <= BUILTIN_COMMANDS
    assert names and names <= BUILTIN_TOOLS
