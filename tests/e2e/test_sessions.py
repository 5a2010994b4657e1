"""Sessions survive the process: SIGKILL mid-turn loses nothing committed, and --continue and
--resume carry on with the history."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
from pathlib import Path

from tests.e2e._bingo import Sandbox, no_traceback
from tests.support.model_server import ModelServer


def _env(server: ModelServer) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.url}


def _prompts(body: dict[str, object]) -> str:
    return repr(body["messages"])


def test_sigkill_mid_turn_then_continue_works(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    (box.project / "notes.txt").write_text("one two\n", encoding="utf-8")
    replies = [
        [("tool", "t1", "read", {"path": "notes.txt"})],
        [("text", "Reading more"), ("pause",)],
        [("text", "Carrying on.")],
    ]
    with ModelServer(replies) as server:
        with box.popen("-p", "first question", env=_env(server)) as proc:
            try:
                assert server.paused.wait(20), "bingo never reached the paused reply"
                os.kill(proc.pid, signal.SIGKILL)
                proc.communicate(timeout=10)
            finally:
                if proc.poll() is None:
                    proc.kill()
                server.release()
        result = box.run("-p", "-c", "second question", env=_env(server))
        bodies = server.bodies
    assert result.returncode == 0, result.stderr
    assert "Carrying on." in result.stdout
    history = _prompts(bodies[2])
    assert "first question" in history and "one two" in history and "second question" in history
    assert no_traceback(result)
    db = sqlite3.connect(box.bingo_home / "data" / "sessions.db")
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_resume_by_id_prefix_carries_the_history(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    with ModelServer([[("text", "First answer.")], [("text", "Second answer.")]]) as server:
        assert box.run("-p", "remember the word kumquat", env=_env(server)).returncode == 0
        db = sqlite3.connect(box.bingo_home / "data" / "sessions.db")
        [(session_id,)] = db.execute("SELECT id FROM sessions").fetchall()
        result = box.run("-p", "--resume", session_id[:-2], "which word?", env=_env(server))
        bodies = server.bodies
    assert result.returncode == 0, result.stderr
    assert "kumquat" in _prompts(bodies[1])


def test_continue_without_a_session_is_one_clear_line(tmp_path: Path) -> None:
    result = Sandbox(tmp_path).run("-p", "-c", "hello", env={"ANTHROPIC_API_KEY": "k"})
    assert result.returncode == 1
    assert result.stderr == 'bingo: there is no session to continue in this project: start one with bingo "PROMPT"\n'


def test_a_slash_command_leaves_no_session_behind(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    assert box.run("-p", "/help").returncode == 0
    db = box.bingo_home / "data" / "sessions.db"
    assert not db.exists() or sqlite3.connect(db).execute("SELECT count(*) FROM sessions").fetchone() == (0,)


def _first_text(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    content = messages[0]["content"]
    return content if isinstance(content, str) else content[0]["text"]


def test_history_past_its_budget_is_compacted_automatically(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"contextBudget": 40, "compactor": "trim"})  # the summary: tests/e2e/test_auto_compaction.py
    with ModelServer([[("text", f"answer {i}")] for i in range(6)]) as server:
        assert box.run("-p", "question 0 " + "padding " * 10, env=_env(server)).returncode == 0
        for i in range(1, 6):
            result = box.run("-p", "-c", f"question {i}", env=_env(server))
            assert result.returncode == 0, result.stderr
        bodies = server.bodies
    assert _first_text(bodies[-1]).startswith("Earlier in this conversation (compacted):")
    assert "question 5" in repr(bodies[-1]["messages"])


def test_compact_command_compacts_the_session_it_continues(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"compactor": "trim"})  # the summary: tests/e2e/test_auto_compaction.py
    with ModelServer([[("text", f"answer {i}")] for i in range(7)]) as server:
        assert box.run("-p", "question 0", env=_env(server)).returncode == 0
        for i in range(1, 6):
            assert box.run("-p", "-c", f"question {i}", env=_env(server)).returncode == 0
        compacted = box.run("-p", "-c", "/compact", env=_env(server))
        assert compacted.returncode == 0, compacted.stderr
        assert re.fullmatch(r"history compacted by trim: about \d+ tokens to about \d+\n", compacted.stdout)
        assert box.run("-p", "-c", "question 6", env=_env(server)).returncode == 0
        bodies = server.bodies
    assert _first_text(bodies[-1]).startswith("Earlier in this conversation (compacted):")
    assert _first_text(bodies[-2]) == "question 0"
