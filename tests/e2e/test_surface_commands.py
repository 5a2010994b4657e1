"""bingo's own commands, from its one table (issue 26, ADR-0038), as each surface offers them
through the real binary: `-p`'s `/help`, the terminal's `/help` in a pty, an editor's
`available_commands_update` over ACP, and a Matrix room's `/help` read back from the room.
Each list is written out here, so a command that goes missing from a surface fails its test;
and `/help` says, in one line, which of bingo's commands this surface does not offer."""

from __future__ import annotations

import asyncio
import re
import subprocess
from pathlib import Path

from tests.e2e._acp import Recorder, connected, text
from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._scripted import use_scripted_model
from tests.e2e._synapse import homeserver
from tests.e2e.test_matrix_channel import Bot, Room, _box, _start, bots, room
from tests.e2e.test_terminal import terminal

__all__ = ["bots", "homeserver", "room"]  # fixtures

EVERYWHERE = {
    "agents",
    "compact",
    "context",
    "help",
    "model",
    "plugins",
    "rewind",
    "sandbox",
    "sessions",
    "skills",
    "tools",
    "usage",
}
PRINT = EVERYWHERE | {"exit", "quit"}
TERMINAL = EVERYWHERE | {"clear", "exit", "quit", "result", "resume"}
ROOM = EVERYWHERE | {"clear", "stop"}
EDITOR = EVERYWHERE | {"clear"}
ELSEWHERE = re.compile(r"not offered here: (.*)")


def _helped(text: str) -> tuple[set[str], set[str]]:
    """The commands a `/help` lists, and the ones its last line says are not offered here."""
    # A row's first cell: at the line's start (a fold, markdown), or after a box's side (a terminal's).
    listed = {match.group(1) for match in re.finditer(r"^(?:│ )?/([a-z-]+)", text, re.MULTILINE)}
    found = ELSEWHERE.search(text)
    assert found is not None, f"/help does not say what is not offered here: {text!r}"
    return listed, {name for name in re.findall(r"/([a-z-]+) \(", found.group(1))}


def test_bingo_p_offers_its_commands_and_help_names_the_others(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)

    helped = box.run("-p", "/help")

    assert helped.returncode == 0, helped.stderr
    listed, elsewhere = _helped(helped.stdout)
    assert listed == PRINT
    assert elsewhere == {"clear", "result", "resume", "stop"}
    assert "/result (the terminal)" in helped.stdout
    assert no_traceback(helped)


def test_the_terminal_offers_its_commands_and_help_names_the_others(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    with terminal(box, model=False) as screen:
        screen.child.send("/help\r")
        shown = screen.expect(r"not offered here: [^\n]*\n")
        screen.prompt()
        listed, elsewhere = _helped(screen.text()[screen.text().rindex("> /help") :])
        screen.child.sendeof()
        assert screen.exits() == 0
    assert shown is not None
    assert listed == TERMINAL
    assert elsewhere == {"stop"}


def test_an_editor_session_offers_its_commands_and_help_names_the_others(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    use_scripted_model(box, [])
    client = Recorder()

    async def go() -> None:
        async with connected(box, client) as conn:
            session = await conn.new_session(cwd=str(box.project))
            await conn.prompt(session_id=session.session_id, prompt=[text("/help")])

    asyncio.run(asyncio.wait_for(go(), 60))
    assert set(client.commands()) == EDITOR
    listed, elsewhere = _helped(client.agent_text().replace("`", "").replace("| ", "\n"))
    assert elsewhere == {"exit", "quit", "result", "resume", "stop"}
    assert EDITOR <= listed


def test_a_room_offers_its_commands_and_help_names_the_others(tmp_path: Path, room: Room, bots: list[Bot]) -> None:
    box = _box(tmp_path, room, [])
    bot = _start(bots, box, room)
    room.person.say(room.id, "/help")
    [helped] = [
        body
        for body in room.wait_for_body(lambda b: any("not offered here" in x for x in b), "the room's /help")
        if "not offered here" in body
    ]
    assert bot.stop() == 0
    listed, elsewhere = _helped(helped)
    assert listed == ROOM | {"wordcount"}  # and the plugin's, which the room's box installs
    assert elsewhere == {"exit", "quit", "result", "resume"}
    assert no_traceback(subprocess.CompletedProcess([], 0, "", bot.stderr))
