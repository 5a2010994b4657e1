"""docs/editors.md as it is written: each editor's configuration block launches `bingo --acp`
(its `command`, `args` and `env`, with `bingo` found where the tests installed it), and the
Python ACP client talks to what it started."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import acp
import pytest

from tests.e2e._acp import WAIT, Recorder, text
from tests.e2e._bingo import BINGO, REPO, Sandbox

DOC = REPO / "docs" / "editors.md"


def configurations() -> list[tuple[str, dict[str, Any]]]:
    """Every `agent_servers` entry of the page's JSON blocks, named by its heading."""
    found: list[tuple[str, dict[str, Any]]] = []
    heading = ""
    for part in re.split(r"(?m)^(## [^\n]*)$|```json\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL):
        if part is None:
            continue
        if part.startswith("## "):
            heading = part[3:].strip()
        elif part.lstrip().startswith("{"):
            for name, entry in json.loads(part)["agent_servers"].items():
                found.append((f"{heading}: {name}", entry))
    return found


def test_the_page_configures_two_editors() -> None:
    assert [where.split(":")[0] for where, _ in configurations()] == ["Zed", "JetBrains IDEs (AI Assistant)"]


@pytest.mark.parametrize(
    ("where", "entry"), configurations(), ids=lambda value: value if isinstance(value, str) else ""
)
def test_each_configuration_starts_bingo_as_an_acp_agent(tmp_path: Path, where: str, entry: dict[str, Any]) -> None:
    box = Sandbox(tmp_path)
    command = BINGO if entry["command"] == "bingo" else entry["command"]
    client = Recorder()

    async def go() -> None:
        async with asyncio.timeout(WAIT):
            async with acp.spawn_agent_process(
                client, command, *entry["args"], env={**box.env, **entry.get("env", {})}, cwd=box.project
            ) as (conn, _):
                await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
                session = await conn.new_session(cwd=str(box.project))
                answer = await conn.prompt(session_id=session.session_id, prompt=[text("/help")])
                assert answer.stop_reason == "end_turn"

    asyncio.run(go())
    assert "| /help | list every command |" in client.agent_text(), where
