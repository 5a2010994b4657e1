"""The one place a plugin-facing name is built: `plugin__<plugin>__<name>`, and the one
place a plugin's question is said to be its own.

Owns the rewriting of the names of a plugin's tools, providers and compactors, so the
permission grammar (and a person choosing a model) can address them, the reading back of
the plugin a rule names (`named_plugin`), and the opening every question a plugin or an MCP
server puts to the person carries (`asked_by`, ADR-0029). Nothing else builds these by hand.
"""

from __future__ import annotations

import json

__all__ = ["asked_by", "bridged_name", "named_plugin"]

_QUOTED_LINE = "\n  │ "
"""What sets off each further line of a plugin's question: no line of it starts where a
line of bingo's own would."""

_SEPARATOR = "__"


def bridged_name(plugin: str, name: str) -> str:
    """The name the kernel knows a plugin's tool (or provider, or compactor) by."""
    return f"plugin{_SEPARATOR}{plugin}{_SEPARATOR}{name}"


def asked_by(kind: str, name: str, question: str) -> str:
    """`question` as the person is shown it: opened by who asks (`plugin "evil" asks: …`,
    `MCP server "docs" asks: …`), the name quoted as JSON quotes it (so no character of it
    can close the quotes or start a line), and every further line set off by `  │ `, so no
    line of the asker's text can pass for bingo's own words (ADR-0029). Each surface escapes
    the whole as it escapes any foreign text (INTERFACE.md §8)."""
    # Every line break a display may honour (str.splitlines': CR, LF, VT, FF, NEL, U+2028,
    # U+2029, ...), not only "\n": a client that breaks at U+2028 must see the mark too.
    lines = question.splitlines() or [""]
    return f"{kind} {json.dumps(name, ensure_ascii=False)} asks: " + _QUOTED_LINE.join(lines)


def named_plugin(tool: str) -> str | None:
    """The plugin a rule's tool name names by its very name (`plugin__wordcount__count`,
    `plugin__wordcount__*`: `wordcount`), or None: a built-in's name, or a `*` in the
    plugin's place (a rule the person wrote for plugins whatever their names)."""
    head = f"plugin{_SEPARATOR}"
    if not tool.startswith(head):
        return None
    plugin, separator, _ = tool[len(head) :].partition(_SEPARATOR)
    if not separator or not plugin or "*" in plugin:
        return None
    return plugin
