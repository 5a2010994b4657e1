"""What the terminal shows as it opens and at its bottom, through the real binary in a pty:
the banner (version, model and provider or how to set one, cwd, session), the last exchanges
of a session `-c` or `--resume` continues, and the status line with the tokens this run spent
(issue 14 item 6)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from bingo import __version__
from tests.e2e._bingo import Sandbox
from tests.e2e.test_terminal import terminal
from tests.support.model_server import ModelServer, Reply


def _imported(shown: str) -> set[str]:
    """The modules PYTHONPROFILEIMPORTTIME said were imported, from what the screen shows."""
    return {line.rpartition("|")[2].strip() for line in shown.splitlines() if line.startswith("import time:")}


def test_the_banner_names_version_model_cwd_and_a_new_session_and_asks_no_model(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, env={"PYTHONPROFILEIMPORTTIME": "1"})
    served: list[ModelServer] = []
    with terminal(box, [[("text", "never asked")]], server=served) as screen:
        screen.shown(
            rf"bingo {re.escape(__version__)} · claude-sonnet-4-5 via anthropic · {re.escape(str(box.project))} · new session\n"
        )
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
        imported = _imported(screen.text())
    assert "bingo.surfaces.terminal" in imported  # the import log was read
    assert not {name for name in imported if name.split(".")[0] == "httpx"}
    assert served[0].requests == []


def test_with_no_provider_the_banner_says_how_to_set_one(tmp_path: Path) -> None:
    # HOME above the project: the working directory is shown from ~.
    box = Sandbox(tmp_path, env={"HOME": str(tmp_path)})
    with terminal(box, model=False) as screen:
        screen.shown(
            rf"bingo {re.escape(__version__)} · no model: no model provider is configured: set ANTHROPIC_API_KEY, "
            r"OPENAI_API_KEY or OPENAI_BASE_URL, or pass --provider · ~/project · new session\n"
        )
        screen.child.sendcontrol("d")
        assert screen.exits() == 0


def _model_env(server: ModelServer) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": server.url}


def test_continue_draws_the_last_exchange_with_markdown_and_calls_before_the_prompt(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    (box.project / "notes.txt").write_text("alpha beta\n", encoding="utf-8")
    replies: list[Reply] = [[("tool", "t1", "read", {"path": "notes.txt"})], [("text", "It has **2 words**.")]]
    with ModelServer(replies) as server:
        assert box.run("-p", "count the words", env=_model_env(server)).returncode == 0
    [(session_id,)] = (
        sqlite3.connect(box.bingo_home / "data" / "sessions.db").execute("SELECT id FROM sessions").fetchall()
    )
    with terminal(box, None, "-c") as screen:
        screen.expect(rf"· continuing session {session_id}\n")
        screen.expect(r"the conversation so far ─+\n> count the words *\n✓ read notes\.txt *\nIt has 2 words\. *\n─+\n")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
        assert "**" not in screen.text()


def test_resume_draws_only_the_last_three_exchanges_escaped(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    replies: list[Reply] = [[("text", f"answer {n}")] for n in range(3)]
    replies.append([("text", "title \x1b]0;pwned\x07 set")])
    with ModelServer(replies) as server:
        assert box.run("-p", "question 0", env=_model_env(server)).returncode == 0
        for n in (1, 2):
            assert box.run("-p", "-c", f"question {n}", env=_model_env(server)).returncode == 0
        assert box.run("-p", "-c", "and \x1b[2J this", env=_model_env(server)).returncode == 0
    [(session_id,)] = (
        sqlite3.connect(box.bingo_home / "data" / "sessions.db").execute("SELECT id FROM sessions").fetchall()
    )
    with terminal(box, None, "--resume", session_id[:8]) as screen:
        screen.expect(
            r"the conversation so far · 1 earlier prompt not shown ─+\n> question 1 *\nanswer 1 *\n> question 2 *\nanswer 2 *\n"
        )
        screen.expect(r"> and \\x1b\[2J this *\ntitle \\x1b\]0;pwned\\x07 set *\n─+\n")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
        assert "question 0" not in screen.text()
        assert "\x1b]0;pwned" not in screen.raw and "\x1b[2J this" not in screen.raw


def test_the_status_line_shows_the_model_and_the_tokens_this_run_spent(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    (box.project / "notes.txt").write_text("alpha beta\n", encoding="utf-8")
    # The local model reports 11 tokens in and 7 out for each response: two responses here.
    replies: list[Reply] = [[("tool", "t1", "read", {"path": "notes.txt"})], [("text", "Two words.")]]
    with terminal(box, replies, cpr=True) as screen:
        screen.expect(r"claude-sonnet-4-5 · 0 in · 0 out")
        screen.child.send("count them\r")
        screen.expect(r"Two words\.")
        screen.child.send("\r")  # an empty line: the prompt is drawn anew, its status line whole
        screen.expect(r"claude-sonnet-4-5 · 22 in · 14 out")
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
