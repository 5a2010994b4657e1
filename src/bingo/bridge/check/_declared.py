"""The checker's declaration checks: what a handshake declares, as bingo would take it.

Owns the checks of an `initialize` answer once its protocol and name are accepted: every
declaration decoded by the wire types themselves (msgspec, the types `schema/plugin.json`
is generated from, so the check and the schema cannot disagree), the keys that decoding
drops in silence (with the key meant), hooks by the kernel's own rule (`hook_problem`),
names a model API or bingo's own names refuse, input schemas, and foreign control
characters in what a person is shown. It reads bytes only; it calls nothing.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from ...kernel.hooks import hook_problem
from ...kernel.registry import BUILTIN_COMMANDS, BUILTIN_TOOLS, RESERVED_SERVICE_PREFIX
from ...wire import (
    CommandArgs,
    CommandSpec,
    CompactorSpec,
    ContributorSpec,
    HookSpec,
    InitializeResult,
    ProviderSpec,
    ServiceSpec,
    ToolSpec,
)
from .. import _problems as P
from .._names import bridged_name
from ..tool import declaration_problems
from ._report import Check
from ._schema import schema_problem

__all__ = ["check_declarations", "check_served"]

_KINDS: dict[str, type[msgspec.Struct]] = {
    "tools": ToolSpec,
    "commands": CommandSpec,
    "contributors": ContributorSpec,
    "compactors": CompactorSpec,
    "providers": ProviderSpec,
    "hooks": HookSpec,
    "services": ServiceSpec,
}
"""Each kind a handshake declares, and the wire type of one declaration."""
_FITS = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A tool name the Messages API and Chat Completions take as it is (providers/_names.py)."""
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What bingo shows escaped (INTERFACE.md §8): C0 and C1 controls but newline and tab, and
bidirectional overrides."""
_LISTED = 12
"""Names a listing line shows before it says how many more there are."""


def _keys(kind: type[msgspec.Struct]) -> tuple[str, ...]:
    return tuple(field.encode_name for field in msgspec.structs.fields(kind))


def _check(id: str, title: str, problems: Sequence[str], *, ok: str, fix: str = "") -> Check:
    if not problems:
        return Check(id=id, group="declarations", status="pass", title=title, detail=ok)
    return Check(id=id, group="declarations", status="fail", title=title, detail="; ".join(problems), fix=fix)


class _Written(msgspec.Struct):
    """A handshake as written: its keys, and each declaration's."""

    tools: list[dict[str, msgspec.Raw]] = []
    commands: list[dict[str, msgspec.Raw]] = []
    contributors: list[dict[str, msgspec.Raw]] = []
    compactors: list[dict[str, msgspec.Raw]] = []
    providers: list[dict[str, msgspec.Raw]] = []
    hooks: list[dict[str, msgspec.Raw]] = []
    services: list[dict[str, msgspec.Raw]] = []


def _shape(raw: bytes) -> tuple[InitializeResult | None, list[str]]:
    """The declaration decoded as bingo decodes it, or each declaration that does not decode
    with msgspec's words for where and why."""
    try:
        return msgspec.json.decode(raw, type=InitializeResult), []
    except msgspec.DecodeError as whole:
        problems: list[str] = []
        try:
            written = msgspec.json.decode(raw, type=_Written)
        except msgspec.DecodeError:
            return None, [str(whole)]
        for kind, spec in _KINDS.items():
            items: list[dict[str, msgspec.Raw]] = getattr(written, kind)
            for index, item in enumerate(items):
                try:
                    msgspec.json.decode(msgspec.json.encode(item), type=spec)
                except msgspec.DecodeError as exc:
                    problems.append(f"{kind}[{index}]: {exc}".replace("at `$", f"at `$.{kind}[{index}]"))
        return None, problems or [str(whole)]


def _unknown(raw: bytes) -> list[str]:
    """Every key decoding drops: the handshake's own, and each declaration's."""
    said: list[str] = []
    try:
        top = msgspec.json.decode(raw, type=dict[str, msgspec.Raw])
        written = msgspec.json.decode(raw, type=_Written)
    except msgspec.DecodeError:
        return said
    known = _keys(InitializeResult)
    strays = P.unknown_keys(list(top), known)
    if strays:
        said.append(
            P.UNKNOWN_KEYS.said(
                whose="the handshake", has="has", s="s" if len(strays) > 1 else "", keys=", ".join(strays)
            )
        )
    tools = declaration_problems(raw)
    if tools is not None:
        said.append(tools)
    for kind, spec in _KINDS.items():
        if kind == "tools":
            continue  # declaration_problems says it, in the run-time notice's words
        keys = _keys(spec)
        items: list[dict[str, msgspec.Raw]] = getattr(written, kind)
        for index, item in enumerate(items):
            strays = P.unknown_keys(list(item), keys)
            args = item.get("args")
            if kind == "commands" and args is not None:
                try:
                    inner = msgspec.json.decode(args, type=dict[str, Any])
                except msgspec.DecodeError:
                    inner = {}
                strays += [f"args.{key}" for key in P.unknown_keys(list(inner), _keys(CommandArgs))]
            if strays:
                said.append(
                    P.UNKNOWN_KEYS.said(
                        whose=f"{kind}[{index}]", has="has", s="s" if len(strays) > 1 else "", keys=", ".join(strays)
                    )
                    + f" (its keys are {', '.join(keys)})"
                )
    return said


def _fitted(plugin: str, info: InitializeResult) -> list[str]:
    """Each tool name a model API would refuse as it is (bingo sends it renamed: ADR-0011)."""
    said: list[str] = []
    for tool in info.tools:
        bridged = bridged_name(plugin, tool.name)
        if tool.name not in BUILTIN_TOOLS and (_FITS.fullmatch(bridged) is None or "__" in tool.name):
            said.append(P.TOOL_NAME.said(name=tool.name, bridged=bridged))
    return said


def _names(info: InitializeResult) -> list[str]:
    """Each name bingo refuses: one of its own, a reserved key, one declared twice."""
    said: list[str] = []
    for tool in info.tools:
        if tool.name in BUILTIN_TOOLS:
            said.append(P.RESERVED_NAME.words(kind="tool", shown=tool.name))
    for command in info.commands:
        if command.name in BUILTIN_COMMANDS:
            said.append(P.RESERVED_NAME.words(kind="command", shown="/" + command.name))
        elif not command.name or re.search(r"[\s/]", command.name):
            said.append(f"command name {command.name!r} cannot be typed after a /: use one word without spaces or /")
    for service in info.services:
        if service.key.startswith(RESERVED_SERVICE_PREFIX):
            said.append(P.RESERVED_SERVICE.words(key=service.key, prefix=RESERVED_SERVICE_PREFIX))
    for kind, names in (
        ("tool", [t.name for t in info.tools]),
        ("command", [c.name for c in info.commands]),
        ("provider", [p.name for p in info.providers]),
        ("compactor", [c.name for c in info.compactors]),
        ("service", [s.key for s in info.services]),
    ):
        for name, times in Counter(names).items():
            if times > 1:
                said.append(P.DUPLICATE_NAME.words(kind=kind, name=name, times=times))
    return said


def _texts(info: InitializeResult) -> list[tuple[str, str]]:
    """Every string of the declaration a person may be shown, with where it is."""
    found: list[tuple[str, str]] = [("version", info.version)]
    for i, tool in enumerate(info.tools):
        found += [(f"tools[{i}].name", tool.name), (f"tools[{i}].description", tool.description)]
    for i, command in enumerate(info.commands):
        found += [
            (f"commands[{i}].name", command.name),
            (f"commands[{i}].hint", command.hint),
            (f"commands[{i}].family", command.family),
        ]
        if command.args.hint:
            found.append((f"commands[{i}].args.hint", command.args.hint))
    for kind, items in (
        ("contributors", info.contributors),
        ("compactors", info.compactors),
        ("providers", info.providers),
    ):
        for i, item in enumerate(items):
            found += [(f"{kind}[{i}].name", item.name), (f"{kind}[{i}].description", item.description)]
    return found


def check_declarations(raw: bytes, plugin: str, *, on_info: Callable[[InitializeResult], None]) -> list[Check]:
    """The declaration checks of the handshake answer `raw` (its `result`) of `plugin`;
    `on_info` is handed the declaration when it decodes."""
    info, shape = _shape(raw)
    checks = [
        _check(
            "declarations.shape",
            "every declaration has its schema's shape",
            shape,
            ok="as schema/plugin.json's InitializeResult",
            fix="see schema/plugin.json ($defs.InitializeResult and the spec of each kind)",
        ),
        _check(
            "declarations.keys",
            "every key is one bingo reads",
            _unknown(raw),
            ok="none unknown",
            fix=P.UNKNOWN_KEYS.fix,
        ),
    ]
    if info is None:
        return checks
    on_info(info)
    counts = {kind: len(getattr(info, kind)) for kind in _KINDS if getattr(info, kind)}
    declared = ", ".join(f"{n} {kind if n != 1 else kind[:-1]}" for kind, n in counts.items()) or "nothing"
    checks[0] = msgspec.structs.replace(checks[0], detail=f"{declared}, as schema/plugin.json says")
    hooks = [
        P.HOOK_REFUSED.said(name=hook.name, problem=problem)
        for hook in info.hooks
        if (problem := hook_problem(hook)) is not None
    ]
    checks.append(
        _check(
            "declarations.hooks",
            "every hook names a site and its points",
            hooks,
            ok=f"{len(info.hooks)} hook(s)" if info.hooks else "none declared",
            fix=P.HOOK_REFUSED.fix.format(),
        )
    )
    checks.extend(_named_and_shown(info, plugin))
    return checks


def _named_and_shown(info: InitializeResult, plugin: str) -> list[Check]:
    """The checks of what a declaration names and shows, a plugin's or an MCP server's:
    names, tool names, input schemas, control characters."""
    checks: list[Check] = []
    checks.append(
        _check(
            "declarations.names", "no name is bingo's own or declared twice", _names(info), ok="none", fix="rename them"
        )
    )
    fitted = _fitted(plugin, info)
    room = 64 - len(bridged_name(plugin, ""))
    tool_names = _check(
        "declarations.tool-names",
        "tool names are model-safe",
        fitted,
        ok="all fit as they are",
        fix=P.TOOL_NAME.fix.format(room=room),
    )
    # A warning: bingo sends such a name renamed, and the call still works (ADR-0011).
    checks.append(msgspec.structs.replace(tool_names, status="warn") if fitted else tool_names)
    schemas = [
        P.INPUT_SCHEMA.said(name=tool.name, why=why)
        for tool in info.tools
        if (why := schema_problem(tool.input_schema)) is not None
    ]
    checks.append(
        _check(
            "declarations.schemas",
            "every inputSchema is a JSON Schema object",
            schemas,
            ok=f"{len(info.tools)} tool(s)" if info.tools else "no tools",
            fix=P.INPUT_SCHEMA.fix.format(),
        )
    )
    control = [f"`{where}`" for where, text in _texts(info) if _CONTROL.search(text)]
    checks.append(
        _check(
            "declarations.text",
            "what a person is shown holds no control characters",
            [
                f"{', '.join(control)} hold{'s' if len(control) == 1 else ''} terminal control characters or bidirectional overrides, which bingo shows escaped"
            ]
            if control
            else [],
            ok="none",
            fix="write plain text: no escape sequences, no control characters",
        )
    )
    return checks


def check_served(info: InitializeResult, plugin: str) -> list[Check]:
    """The declaration checks of what MCP server `plugin` lists, as bingo reads it (its
    tools and its prompts, as slash commands): what bingo renames or refuses of it."""
    tools = ", ".join(tool.name for tool in info.tools[:_LISTED]) + (
        f" and {len(info.tools) - _LISTED} more" if len(info.tools) > _LISTED else ""
    )
    prompts = ", ".join("/" + command.name for command in info.commands[:_LISTED]) + (
        f" and {len(info.commands) - _LISTED} more" if len(info.commands) > _LISTED else ""
    )
    checks = [
        Check(
            id="declarations.tools",
            group="declarations",
            status="pass",
            title="it lists its tools (tools/list)",
            detail=f"{len(info.tools)}: {tools}" if info.tools else "none",
        ),
    ]
    if info.commands:
        checks.append(
            Check(
                id="declarations.prompts",
                group="declarations",
                status="pass",
                title="its prompts are slash commands (prompts/list)",
                detail=f"{len(info.commands)}: {prompts}",
            )
        )
    checks.extend(_named_and_shown(info, plugin))
    return checks
