"""`bingo --check-plugin` for what people bring: skills, markdown commands, command hooks and
agent files, one line per file or entry, ✓ or ✗ with the fix (issue 29 item 5, issue 33).

Owns what a path holds of them (a skill's directory, a directory of skills, a directory of
commands or of agents, a host's directory such as `~/.claude` or `<project>/.claude` holding
`skills/`, `commands/` and `agents/`, or a settings file with `hooks`), the checks (each file read as a run reads it,
so what passes here loads there) and the report (text, or one JSON document). It runs nothing
a file or a hook names: a hook's command is checked for being there, not run.
"""

from __future__ import annotations

import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

import msgspec

from ..kernel.patterns import linear
from ..kernel.settings import COMMAND_HOOK_EVENTS
from ..wire import Json, is_array, is_object
from ._files import Layer
from .agents import find_agents
from .commands import find_commands
from .skills import SKILL_FILE, find_skills

__all__ = ["Checked", "brings_anything", "check_brought", "report_json"]

_OTHER_EVENTS = {"Notification", "PreCompact", "SubagentStop", "PermissionRequest", "SubagentStart"}
"""Claude Code events bingo does not run: named as such, not as typos."""


@dataclass(frozen=True, slots=True)
class Checked:
    """One line of the report."""

    ok: bool
    what: str
    fix: str = ""

    def line(self) -> str:
        return f"{'✓' if self.ok else '✗'} {self.what}" + (f": {self.fix}" if self.fix else "")


def _is_skills(path: Path) -> bool:
    return (path / SKILL_FILE).is_file() or any((child / SKILL_FILE).is_file() for child in _children(path))


def _children(path: Path) -> list[Path]:
    try:
        return sorted(child for child in path.iterdir() if child.is_dir())
    except OSError:
        return []


def _is_commands(path: Path) -> bool:
    return path.name == "commands"


def _is_agents(path: Path) -> bool:
    return path.name == "agents"


def brings_anything(path: Path) -> bool:
    """Whether `path` is something `check_brought` checks (and no plugin's directory)."""
    if path.is_file():
        return path.name.startswith("settings") and path.suffix == ".json"
    if (path / "plugin.json").exists():
        return False
    return (
        _is_skills(path)
        or _is_commands(path)
        or _is_agents(path)
        or any((path / name).is_dir() for name in ("skills", "commands", "agents"))
    )


def _skills(directory: Path) -> list[Checked]:
    said: list[str] = []
    if (directory / SKILL_FILE).is_file():  # one skill's own directory: check it as its parent's child
        found = find_skills([Layer(directory.parent, "user", Path("/"))], said.append)
        found = {name: skill for name, skill in found.items() if skill.directory == directory}
        said = [line for line in said if f"{directory}/" in line]
    else:
        found = find_skills([Layer(directory, "user", Path("/"))], said.append)
    lines = [Checked(True, f"skill {name} ({skill.directory})") for name, skill in sorted(found.items())]
    lines += [Checked(False, line) for line in said]
    return lines


def _commands(directory: Path) -> list[Checked]:
    said: list[str] = []
    found = find_commands([Layer(directory, "user", Path("/"))], said.append)
    lines = [
        Checked(True, f"command /{name}" + (f" {c.argument_hint}" if c.argument_hint else "") + f" ({c.path})")
        for name, c in sorted(found.items())
    ]
    return lines + [Checked(False, line) for line in said]


def _agents(directory: Path) -> list[Checked]:
    said: list[str] = []
    found = find_agents([Layer(directory, "user", Path("/"))], said.append)
    lines = [Checked(True, f"agent {name} ({agent.path})") for name, agent in sorted(found.items())]
    return lines + [Checked(False, line) for line in said]


def _hook_entry(event: str, index: int, entry: Json) -> list[Checked]:
    where = f"hooks.{event}[{index}]"
    if not is_object(entry):
        return [Checked(False, where, 'write an object: {"matcher": "Bash", "hooks": [{"type": "command", ...}]}')]
    out: list[Checked] = []
    matcher = entry.get("matcher", "")
    if not isinstance(matcher, str):
        out.append(Checked(False, f"{where}.matcher", "write a regular expression over tool names, as a string"))
    elif matcher not in ("", "*"):
        try:
            linear(matcher)
        except ValueError as exc:
            out.append(Checked(False, f"{where}.matcher {matcher!r} is not a regular expression ({exc})", "fix it"))
    hooks = entry.get("hooks")
    if not is_array(hooks) or not hooks:
        return [*out, Checked(False, f"{where}.hooks", 'list its commands: [{"type": "command", "command": "..."}]')]
    for at, hook in enumerate(hooks):
        here = f"{where}.hooks[{at}]"
        if not is_object(hook):
            out.append(Checked(False, here, 'write {"type": "command", "command": "..."}'))
            continue
        kind, command, timeout = hook.get("type", "command"), hook.get("command"), hook.get("timeout")
        if kind != "command":
            out.append(Checked(False, f"{here} is of type {kind!r}", 'bingo runs "command" hooks only'))
        elif not isinstance(command, str) or not command.strip():
            out.append(Checked(False, here, "give it a command (a string, run by bash -c)"))
        elif timeout is not None and (
            not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0
        ):
            out.append(Checked(False, f"{here}.timeout", "write a positive number of seconds"))
        else:
            out.append(_command_there(here, command))
    return out


def _command_there(here: str, command: str) -> Checked:
    """Whether the program a hook's command starts is there (nothing is run to find out)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return Checked(False, f"{here}: {command[:80]!r}", "its quotes are not closed")
    program = words[0] if words else ""
    if "$" in program:
        pass  # a variable (`$CLAUDE_PROJECT_DIR/...`): known only when it runs
    elif "/" in program or program.startswith("~"):
        if not Path(program).expanduser().exists():
            return Checked(False, f"{here}: {program} does not exist", "fix the path")
    elif shutil.which(program) is None:
        return Checked(False, f"{here}: {program!r} is not on PATH", "install it or name it by its path")
    return Checked(True, f"{here}: {command[:80]}")


def _hooks(path: Path) -> list[Checked]:
    try:
        document: Json = msgspec.json.decode(path.read_bytes().removeprefix(b"\xef\xbb\xbf"))
    except (OSError, msgspec.DecodeError) as exc:
        return [Checked(False, f"{path} cannot be read as JSON ({exc})", "fix the file")]
    hooks = document.get("hooks") if is_object(document) else None
    if not is_object(hooks):
        return [Checked(True, f"{path}: no hooks")]
    out: list[Checked] = []
    for event, entries in hooks.items():
        if event == "failClosed":
            continue
        if event not in COMMAND_HOOK_EVENTS:
            fix = (
                "bingo does not run this event"
                if event in _OTHER_EVENTS
                else f"bingo runs {', '.join(COMMAND_HOOK_EVENTS)}"
            )
            out.append(Checked(False, f"hooks.{event}", fix))
            continue
        if not is_array(entries):
            out.append(Checked(False, f"hooks.{event}", "write a list of entries"))
            continue
        for index, entry in enumerate(entries):
            out += _hook_entry(event, index, entry)
    return out


def check_brought(path: Path) -> list[Checked]:
    """The checks of what `path` holds (see the module)."""
    if path.is_file():
        return _hooks(path)
    lines: list[Checked] = []
    if any((path / name).is_dir() for name in ("skills", "commands", "agents")) or (path / "settings.json").is_file():
        if (path / "skills").is_dir():
            lines += _skills(path / "skills")
        if (path / "commands").is_dir():
            lines += _commands(path / "commands")
        if (path / "agents").is_dir():
            lines += _agents(path / "agents")
        for name in ("settings.json", "settings.local.json"):
            if (path / name).is_file():
                lines += _hooks(path / name)
        return lines
    if _is_skills(path):
        return _skills(path)
    if _is_agents(path):
        return _agents(path)
    return _commands(path)


def report_json(lines: list[Checked]) -> str:
    """The report as one JSON document: `{"ok", "checks": [{"ok", "what", "fix"}]}`."""
    return (
        msgspec.json.encode(
            {"ok": all(c.ok for c in lines), "checks": [{"ok": c.ok, "what": c.what, "fix": c.fix} for c in lines]}
        ).decode()
        + "\n"
    )
