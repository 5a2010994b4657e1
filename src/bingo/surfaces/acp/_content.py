"""What an editor sends, as bingo takes it: a `session/prompt`'s content blocks as the turn's
text and images (`prompt_content`), and the MCP servers a `session/new` or `session/load`
names as plugins of this run (`mcp_servers`).

Pure translation: it neither runs a prompt nor starts a server (the agent and the app do).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...wire import ImageBlock, Json, is_array, is_object

__all__ = ["McpServerSpec", "mcp_servers", "prompt_content"]


@dataclass(frozen=True, slots=True)
class McpServerSpec:
    """An MCP server an editor passes in `session/new` or `session/load`: stdio (`command`,
    `args`, `env`) or Streamable HTTP (`url`, `headers`). `name` is a plugin name already."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()


_PLUGIN_NAME = re.compile(r"[^a-z0-9]+")


def _pairs(value: Json) -> tuple[tuple[str, str], ...]:
    """ACP's `[{name, value}]` (an env or headers list) as pairs; what is not one is left out."""
    if not is_array(value):
        return ()
    return tuple(
        (item["name"], item["value"])
        for item in value
        if is_object(item) and isinstance(item.get("name"), str) and isinstance(item.get("value"), str)
    )


def mcp_servers(raw: list[Json]) -> tuple[list[McpServerSpec], list[str]]:
    """The MCP servers of a `session/new`'s `mcpServers`, named as plugins (`My Server` is
    `my-server`), and a line for each that cannot be hosted."""
    found: list[McpServerSpec] = []
    problems: list[str] = []
    for entry in raw:
        if not is_object(entry) or not isinstance(entry.get("name"), str):
            problems.append("an MCP server with no name")
            continue
        given: str = entry["name"]
        name = _PLUGIN_NAME.sub("-", given.lower()).strip("-")[:64] or "mcp"
        kind = entry.get("type")
        if kind == "http" and isinstance(entry.get("url"), str):
            found.append(McpServerSpec(name=name, url=entry["url"], headers=_pairs(entry.get("headers"))))
        elif kind in (None, "stdio") and isinstance(entry.get("command"), str):
            args = entry.get("args")
            found.append(
                McpServerSpec(
                    name=name,
                    command=entry["command"],
                    args=tuple(a for a in args if isinstance(a, str)) if is_array(args) else (),
                    env=_pairs(entry.get("env")),
                )
            )
        else:
            problems.append(
                f"the MCP server {given!r} ({kind or 'stdio'}): bingo speaks to MCP servers over stdio and Streamable HTTP"
            )
    return found, problems


def prompt_content(blocks: list[Json]) -> tuple[str, list[ImageBlock], list[str]]:
    """A `session/prompt`'s content as the turn's text and images: text as it is, a file
    link as its path, an embedded file as a fenced block under its name, an image (or an
    embedded file that is one) as an image (the kernel checks it: `check_images`); and what
    was left out, named."""
    pieces: list[str] = []
    images: list[ImageBlock] = []
    skipped: list[str] = []
    for block in blocks:
        kind = block.get("type") if is_object(block) else None
        if not is_object(block):
            continue
        if kind == "text" and isinstance(block.get("text"), str):
            pieces.append(block["text"])
        elif kind == "image":
            data, media_type = block.get("data"), block.get("mimeType")
            if not isinstance(data, str) or not data:
                skipped.append("an image block with no data (bingo takes an image's bytes, not a link to one)")
            elif not isinstance(media_type, str):
                skipped.append("an image block with no mimeType")
            else:
                images.append(ImageBlock(media_type=media_type, data=data))
        elif kind == "resource_link" and isinstance(block.get("uri"), str):
            pieces.append(_uri_path(block["uri"]))
        elif kind == "resource" and is_object(block.get("resource")):
            resource = block["resource"]
            uri, text = resource.get("uri"), resource.get("text")
            blob, media_type = resource.get("blob"), resource.get("mimeType")
            if isinstance(text, str):
                fence = "```"
                while fence in text:
                    fence += "`"
                pieces.append(f"{_uri_path(uri) if isinstance(uri, str) else 'attached'}:\n{fence}\n{text}\n{fence}")
            elif isinstance(blob, str) and isinstance(media_type, str) and media_type.startswith("image/"):
                images.append(ImageBlock(media_type=media_type, data=blob))
            else:
                skipped.append(f"the binary resource {uri}")
        else:
            skipped.append(
                f"{'an' if kind[:1] in tuple('aeiou') else 'a'} {kind} block"
                if isinstance(kind, str)
                else "a block of no type"
            )
    return "\n".join(pieces), images, skipped


def _uri_path(uri: str) -> str:
    return uri.removeprefix("file://") if uri.startswith("file:///") else uri
