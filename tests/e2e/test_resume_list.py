"""`--resume` with no id and `/resume`: this project's sessions offered as a list to choose
from with keys (issue 25 item 9; INTERFACE.md §1; ADR-0035), through the real binary in a
pty. The evidence that a session was continued is what the model received next: the
chosen session's earlier prompt in the request's history."""

from __future__ import annotations

import json
from pathlib import Path

from bingo.store import SessionStore
from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e.test_terminal import terminal
from tests.support.model_server import ModelServer

PROMPTS = ["the secret word is kumquat", "the colour is \x1b]0;pwned\x07teal", "the number is 42"]
"""The first prompts of three sessions, oldest first (the second holds an escape sequence)."""


def _sessions(box: Sandbox, prompts: list[str] = PROMPTS) -> None:
    """One session per prompt, made by `bingo -p`, oldest first."""
    with ModelServer([[("text", "Noted.")] for _ in prompts]) as server:
        for prompt in prompts:
            done = box.run("-p", prompt, env={"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "test"})
            assert done.returncode == 0, done.stderr


def _history(body: dict[str, object]) -> str:
    return repr(body["messages"])


def test_resume_with_no_id_lists_this_projects_sessions_latest_first_and_a_digit_continues_one(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _sessions(box)
    served: list[ModelServer] = []
    with terminal(box, [[("text", "It is teal.")]], "--resume", server=served) as screen:
        screen.expect(r"continue which session of this project\?\n")
        # The latest first, each with when and its first prompt (escaped), then its id.
        screen.expect(
            r"❯ 1\) +just now  the number is 42  · \S+\n +2\) +just now  the colour is \\x1b\]0;pwned\\x07teal  · \S+\n +3\) +just now  the secret word is kumquat  · \S+\n"
        )
        screen.expect(r"1-3 or ↑/↓ and Enter choose · Esc starts a new session")
        screen.child.send("2")
        screen.expect(r"continuing session")
        screen.expect(r"> the colour is \\x1b\]0;pwned\\x07teal *\nNoted\.")  # what it said so far
        screen.prompt()
        screen.child.send("which colour?\r")
        screen.expect(r"It is teal\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
    assert "\x1b]0;pwned" not in screen.raw
    history = _history(served[0].bodies[0])
    assert "teal" in history and "kumquat" not in history and "42" not in history


def test_arrows_and_enter_choose_too_and_esc_starts_a_new_session(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _sessions(box)
    served: list[ModelServer] = []
    with terminal(box, [[("text", "Kumquat.")]], "--resume", server=served) as screen:
        screen.expect(r"Esc starts a new session")
        screen.child.send("\x1b[B\x1b[B")  # down, down: the oldest
        screen.expect(r"❯ 3\) ")
        screen.child.send("\r")
        screen.expect(r"> the secret word is kumquat *\nNoted\.")
        screen.prompt()
        screen.child.send("which word?\r")
        screen.expect(r"Kumquat\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
    assert "kumquat" in _history(served[0].bodies[0])
    served = []
    with terminal(box, [[("text", "New.")]], "--resume", server=served) as screen:
        screen.expect(r"Esc starts a new session")
        screen.child.send("\x1b")
        screen.expect(r"bingo: no session chosen: this is a new one")
        screen.expect(r"new session")
        screen.prompt()
        screen.child.send("hello\r")
        screen.expect(r"New\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
    assert [m["role"] for m in served[0].bodies[0]["messages"]] == ["user"]


def test_without_a_terminal_resume_with_no_id_is_usage_naming_how_to_list_them(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _sessions(box, PROMPTS[:1])
    for args in (["--resume"], ["-p", "--resume"], ["--resume", "-p", "hello"]):
        result = box.run(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert (
            result.stderr
            == "bingo: --resume with no session id needs a terminal to choose one on: give the session's id: bingo --resume ID (bingo -p /sessions lists them)\n"
        ), args
        assert result.stdout == "" and no_traceback(result)


def test_slash_resume_offers_the_other_sessions_and_the_next_prompt_continues_the_chosen_one(tmp_path: Path) -> None:
    from tests.e2e.test_terminal_clear import _watcher

    box = Sandbox(tmp_path)
    _sessions(box, PROMPTS[:2])
    seen = _watcher(box)  # a plugin's session.start and session.end hooks
    served: list[ModelServer] = []
    with terminal(box, [[("text", "Started.")], [("text", "Kumquat.")]], server=served) as screen:
        screen.child.send("a fresh start\r")
        screen.expect(r"Started\.")
        screen.prompt()
        screen.child.send("/resume\r")
        # This session is not offered: the two before it are, the latest first.
        screen.expect(
            r"continue which session of this project\?\n❯ 1\) +just now  the colour is \\x1b\]0;pwned\\x07teal  · \S+\n +2\) +just now  the secret word is kumquat  · \S+\n"
        )
        screen.child.send("2")
        screen.expect(r"> the secret word is kumquat *\nNoted\.")
        screen.expect(r"continuing session \S+: your next prompt goes on from it")
        screen.prompt()
        screen.child.send("which word?\r")
        screen.expect(r"Kumquat\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
    history = _history(served[0].bodies[1])
    assert "kumquat" in history and "a fresh start" not in history
    with SessionStore(box.bingo_home / "data" / "sessions.db") as store:
        titled = {info.title: info.id for info in store.sessions(str(box.project))}
    fresh, chosen = titled["a fresh start"], titled["the secret word is kumquat"]
    observed = [tuple(json.loads(line)) for line in seen.read_text(encoding="utf-8").splitlines()]
    # The hooks see the fresh session end at /resume and the chosen one start there.
    assert observed == [("start", ""), ("end", fresh), ("start", chosen), ("end", chosen)]
