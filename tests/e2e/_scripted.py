"""Model turns in black-box tests without any HTTP: the `scripted-model` test plugin is a
real provider process on the wire, driven by its settings slice."""

from __future__ import annotations

import json
from typing import Any

from bingo.sandbox.janitor import proc as procfs
from tests.e2e._bingo import TEST_PLUGINS, Sandbox

PROVIDER = "plugin__scripted-model__scripted"


def text(value: str) -> dict[str, Any]:
    """A reply step: stream this text."""
    return {"text": value}


def tool(call_id: str, name: str, input: dict[str, Any]) -> dict[str, Any]:
    """A reply step: ask for this tool call."""
    return {"tool": {"id": call_id, "name": name, "input": input}}


def use_scripted_model(box: Sandbox, replies: list[list[dict[str, Any]]], **settings: Any) -> None:
    """Install the scripted model in the user layer and make it this sandbox's provider."""
    if not (box.bingo_home / "plugins" / "scripted-model").exists():
        box.install(TEST_PLUGINS / "scripted-model")
    plugins = settings.pop("plugins", {})
    box.settings({"provider": PROVIDER, "plugins": {"scripted-model": {"replies": replies}, **plugins}, **settings})


def model_requests(box: Sandbox) -> list[dict[str, Any]]:
    """The params of every `provider/stream` the scripted model received, in order."""
    log = box.bingo_home / "data" / "plugins" / "scripted-model" / "requests.jsonl"
    if not log.exists():
        return []
    messages = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]
    return [m["params"] for m in messages if m.get("method") == "provider/stream"]


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Every toolResult block in a provider/stream request's messages."""
    found: list[dict[str, Any]] = []
    for message in request["request"]["messages"]:
        for block in message["content"]:
            if block.get("type") == "toolResult":
                found.append(block)
    return found


def result_text(block: dict[str, Any]) -> str:
    """The text of a toolResult block."""
    return "".join(part.get("text", "") for part in block["parts"])


def notices(stderr: str, source: str) -> list[str]:
    """The notice lines said under `source`'s name."""
    return [line for line in stderr.splitlines() if line.startswith(source + ": ")]


def gone(pid: int) -> bool:
    """True when the process no longer runs (a zombie counts as gone)."""
    return not procfs.alive(pid)
